import { queryOptions } from '@tanstack/react-query';
import { z } from 'zod/mini';

import { apiRequest } from './client';

const optionListSchema = z.array(z.object({ key: z.string(), value: z.catch(z.string(), '') }));

/** Options as key → text (spec 02 §3: booleans are the text true or false). */
export type Options = Record<string, string>;

/** GET /api/option/: every non-secret option, as key → text. */
export async function fetchOptions(): Promise<Options> {
  const list = await apiRequest('/api/option/', { schema: optionListSchema });
  return Object.fromEntries(list.map(({ key, value }) => [key, value]));
}

export const optionsQueryOptions = queryOptions({
  queryKey: ['options'],
  queryFn: fetchOptions,
});

/** PUT /api/option/: one key's new text. */
export function updateOption(key: string, value: string): Promise<void> {
  return apiRequest('/api/option/', { method: 'PUT', body: { key, value } });
}

/** POST /api/option/rest_model_ratio (root): drops the price overrides (built-in tables apply). */
export function resetModelRatios(): Promise<void> {
  return apiRequest('/api/option/rest_model_ratio', { method: 'POST' });
}

/** A log deletion job (GET /api/log/delete_progress). */
export const deleteProgressSchema = z.object({
  running: z.catch(z.boolean(), false),
  target_timestamp: z.catch(z.number(), 0),
  total: z.catch(z.number(), 0),
  deleted: z.catch(z.number(), 0),
  started_at: z.catch(z.number(), 0),
  finished_at: z.catch(z.number(), 0),
  automatic: z.catch(z.boolean(), false),
  error: z.catch(z.string(), ''),
});
export type DeleteProgress = z.infer<typeof deleteProgressSchema>;

/**
 * DELETE /api/log/?target_timestamp: starts deleting every log older than the time (seconds).
 * `data` is the number of rows it deletes; a large job goes on in the background.
 */
export function deleteLogsBefore(target: number): Promise<number> {
  return apiRequest('/api/log/', {
    method: 'DELETE',
    query: { target_timestamp: target },
    schema: z.catch(z.number(), 0),
  });
}

/** GET /api/log/delete_progress: the current or last deletion job. */
export function fetchDeleteProgress(): Promise<DeleteProgress> {
  return apiRequest('/api/log/delete_progress', { schema: deleteProgressSchema });
}
