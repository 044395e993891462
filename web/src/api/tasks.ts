import { keepPreviousData, queryOptions } from '@tanstack/react-query';
import { z } from 'zod/mini';

import { apiRequest } from './client';

const text = z.catch(z.string(), '');
const count = z.catch(z.number(), 0);

/**
 * A drawing (Midjourney) task of GET /api/mj/ and /api/mj/self/ (spec 02 §3). Its times are in
 * milliseconds, as Midjourney-proxy reports them; `channel_id` is 0 for a non-admin.
 */
export const drawingSchema = z.object({
  id: z.int(),
  code: count,
  user_id: count,
  username: z.catch(z.optional(z.string()), undefined),
  action: text,
  mj_id: text,
  prompt: text,
  prompt_en: text,
  description: text,
  created_at: count,
  submit_time: count,
  start_time: count,
  finish_time: count,
  image_url: text,
  video_url: text,
  status: text,
  progress: text,
  fail_reason: text,
  channel_id: count,
  quota: count,
  refunded: z.catch(z.boolean(), false),
});
export type DrawingTask = z.infer<typeof drawingSchema>;

/**
 * A music or video task of GET /api/task/ and /api/task/self (spec 02 §3). Its times are unix
 * seconds; an empty status means the task is still being submitted.
 */
export const taskSchema = z.object({
  id: z.int(),
  created_at: count,
  task_id: text,
  platform: text,
  user_id: count,
  username: z.catch(z.optional(z.string()), undefined),
  channel_id: count,
  quota: count,
  refunded: z.catch(z.boolean(), false),
  action: text,
  status: text,
  fail_reason: text,
  submit_time: count,
  start_time: count,
  finish_time: count,
  progress: text,
  image_url: text,
  result_url: text,
  data: text,
});
export type MusicTask = z.infer<typeof taskSchema>;

const pageOf = <T extends z.ZodMiniType>(item: T) =>
  z.object({
    items: z.catch(z.array(item), []),
    page: z.catch(z.int(), 1),
    page_size: z.catch(z.int(), 10),
    total: z.catch(z.int(), 0),
  });

export const drawingPageSchema = pageOf(drawingSchema);
export const taskPageSchema = pageOf(taskSchema);

/** The filter of both task pages: an upstream task id, a channel (admins), a window in seconds. */
export interface TaskFilter {
  id: string;
  channel: string;
  start: number;
  end: number;
}

export type TaskListQuery = TaskFilter & { page: number; pageSize: number };

/** The query string of the list calls; `idKey` is `mj_id` or `task_id`. */
function taskQuery(
  { page, pageSize, ...filter }: TaskListQuery,
  admin: boolean,
  idKey: 'mj_id' | 'task_id',
): Record<string, string | number> {
  const query: Record<string, string | number> = { p: page, page_size: pageSize };
  if (admin && filter.channel.trim() !== '') query.channel_id = filter.channel.trim();
  if (filter.id.trim() !== '') query[idKey] = filter.id.trim();
  if (filter.start > 0) query.start_timestamp = filter.start;
  if (filter.end > 0) query.end_timestamp = filter.end;
  return query;
}

/** GET /api/mj/ (admin) or /api/mj/self/ (own). */
export const drawingsQueryOptions = (query: TaskListQuery, admin: boolean) =>
  queryOptions({
    queryKey: ['drawings', admin ? 'all' : 'self', query],
    queryFn: () =>
      apiRequest(admin ? '/api/mj/' : '/api/mj/self/', {
        query: taskQuery(query, admin, 'mj_id'),
        schema: drawingPageSchema,
      }),
    placeholderData: keepPreviousData,
  });

/** GET /api/task/ (admin) or /api/task/self (own). */
export const tasksQueryOptions = (query: TaskListQuery, admin: boolean) =>
  queryOptions({
    queryKey: ['tasks', admin ? 'all' : 'self', query],
    queryFn: () =>
      apiRequest(admin ? '/api/task/' : '/api/task/self', {
        query: taskQuery(query, admin, 'task_id'),
        schema: taskPageSchema,
      }),
    placeholderData: keepPreviousData,
  });

/** POST /api/task/{id}/refund: an admin returns a task's quota (audited). */
export function refundTask(id: number) {
  return apiRequest(`/api/task/${id}/refund`, {
    method: 'POST',
    schema: z.object({ id: z.int(), quota: count, status: text }),
  });
}
