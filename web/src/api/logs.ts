import { keepPreviousData, queryOptions } from '@tanstack/react-query';
import { z } from 'zod/mini';

import { apiRequest } from './client';

/** Log types (spec 02 §4); 0 in a filter means every type. */
export const LOG_TYPE_ALL = 0;
export const logTypes = [1, 2, 3, 4, 5] as const;
export type LogType = (typeof logTypes)[number];
/** Types whose rows carry model, token, group, tokens and cost: 0, 2 and 5 (spec 02 §4). */
export const isRequestType = (type: number): boolean => type === 0 || type === 2 || type === 5;

const text = z.catch(z.string(), '');
const count = z.catch(z.number(), 0);

/** A log entry (spec 02 §3); `other` is JSON text, read with {@link parseLogOther}. */
export const logSchema = z.object({
  id: z.int(),
  created_at: count,
  type: z.catch(z.int(), 0),
  channel: count,
  channel_name: text,
  username: text,
  user_id: count,
  token_name: text,
  model_name: text,
  group: text,
  is_stream: z.catch(z.boolean(), false),
  use_time: count,
  prompt_tokens: count,
  completion_tokens: count,
  quota: count,
  content: text,
  other: text,
});
export type LogEntry = z.infer<typeof logSchema>;

export const logPageSchema = z.object({
  items: z.catch(z.array(logSchema), []),
  page: z.catch(z.int(), 1),
  page_size: z.catch(z.int(), 10),
  total: z.catch(z.int(), 0),
  /** False when `total` is the server's bounded estimate rather than an exact count. */
  total_exact: z.catch(z.boolean(), true),
});
export type LogPage = z.infer<typeof logPageSchema>;

/** GET /api/log/stat: quota spent, requests and tokens per minute, for the filter. */
export const logStatSchema = z.object({
  quota: count,
  /** False when `quota` is the server's estimate from a bounded sample. */
  quota_exact: z.catch(z.boolean(), true),
  rpm: count,
  tpm: count,
});
export type LogStat = z.infer<typeof logStatSchema>;

const optionalNumber = z.catch(z.optional(z.number()), undefined);
const optionalText = z.catch(z.optional(z.string()), undefined);

/**
 * One channel tried for a request, in other.admin_info.attempts (admins only; short keys):
 * channel id `c`, HTTP status `s` (0: no answer), `ms` to the answer, error class `e` (empty on
 * success).
 */
export const attemptSchema = z.object({
  c: z.catch(z.number(), 0),
  s: z.catch(z.number(), 0),
  ms: optionalNumber,
  e: z.catch(z.string(), ''),
});
export type Attempt = z.infer<typeof attemptSchema>;

/** The error classes the relay records for a failed attempt. */
export const attemptErrors = [
  'auth',
  'rate_limit',
  'timeout',
  'server',
  'client',
  'connect',
  'network',
  'unsupported',
] as const;

/** Whose rate limit refused a request (P15; the limiter's scope). */
export const limitScopes = ['user', 'token', 'channel', 'channel_key', 'rule'] as const;
/**
 * Which of its limits; `model_requests` and `model_successes` are the model request limit
 * (ModelRequestRateLimit*, a user's rule) with its window in `window_minutes`.
 */
export const limitKinds = [
  'concurrency',
  'rpm',
  'tpm',
  'rpd',
  'model_requests',
  'model_successes',
] as const;

/**
 * The rate limit that refused a request, in an error row's other.limit (P15): its scope, kind
 * and value, with the owner's ids or the rule's group and model.
 */
export const limitRefusalSchema = z.looseObject({
  scope: z.catch(z.enum(limitScopes), 'rule'),
  kind: z.catch(z.optional(z.enum(limitKinds)), undefined),
  limit: optionalNumber,
  /** The model request limit's window. */
  window_minutes: optionalNumber,
  user_id: optionalNumber,
  token_id: optionalNumber,
  channel_id: optionalNumber,
  /** The channel key's line, 0 = the first. */
  key_index: optionalNumber,
  group: optionalText,
  model: optionalText,
});
export type LimitRefusal = z.infer<typeof limitRefusalSchema>;

/** The error code of a request refused by a rate limit. */
export const RATE_LIMIT_CODE = 'rate_limit_exceeded';

/** The fields of a log's `other` the console shows (spec 02 §3); anything missing is undefined. */
export const logOtherSchema = z.looseObject({
  model_ratio: optionalNumber,
  model_price: optionalNumber,
  completion_ratio: optionalNumber,
  group_ratio: optionalNumber,
  user_group_ratio: optionalNumber,
  cache_tokens: optionalNumber,
  cache_ratio: optionalNumber,
  cache_creation_tokens: optionalNumber,
  cache_creation_ratio: optionalNumber,
  /** First-response time in ms; -1 or missing when unknown. */
  frt: optionalNumber,
  is_model_mapped: z.catch(z.optional(z.boolean()), undefined),
  upstream_model_name: optionalText,
  reasoning_effort: optionalText,
  /** An error row's error code (e.g. `rate_limit_exceeded`). */
  error_code: optionalText,
  limit: z.catch(z.optional(limitRefusalSchema), undefined),
  admin_info: z.catch(
    z.optional(
      z.looseObject({
        use_channel: z.catch(z.optional(z.array(z.number())), undefined),
        attempts: z.catch(z.optional(z.array(attemptSchema)), undefined),
      }),
    ),
    undefined,
  ),
});
export type LogOther = z.infer<typeof logOtherSchema>;

/** Reads a log's `other` JSON text; broken or empty text gives an empty object. */
export function parseLogOther(other: string): LogOther {
  let raw: unknown;
  try {
    raw = other ? JSON.parse(other) : {};
  } catch {
    raw = {};
  }
  const parsed = logOtherSchema.safeParse(typeof raw === 'object' && raw !== null ? raw : {});
  return parsed.success ? parsed.data : {};
}

/** The filter of the log page; admins add username and channel. Times are unix seconds. */
export interface LogFilter {
  type: number;
  tokenName: string;
  modelName: string;
  group: string;
  username: string;
  channel: string;
  start: number;
  end: number;
}

export interface LogListQuery extends LogFilter {
  page: number;
  pageSize: number;
}

/** The query string of the log calls: empty fields are left out, admin-only ones for users. */
export function logQuery(filter: LogFilter, admin: boolean): Record<string, string | number> {
  const query: Record<string, string | number> = { type: filter.type };
  const put = (key: string, value: string) => {
    if (value.trim() !== '') query[key] = value.trim();
  };
  if (admin) put('username', filter.username);
  put('token_name', filter.tokenName);
  put('model_name', filter.modelName);
  if (filter.start > 0) query.start_timestamp = filter.start;
  if (filter.end > 0) query.end_timestamp = filter.end;
  if (admin) put('channel', filter.channel);
  put('group', filter.group);
  return query;
}

/** GET /api/log/ (admin: every user's logs) or GET /api/log/self/ (the caller's own). */
export function fetchLogs({ page, pageSize, ...filter }: LogListQuery, admin: boolean) {
  return apiRequest(admin ? '/api/log/' : '/api/log/self/', {
    query: { p: page, page_size: pageSize, ...logQuery(filter, admin) },
    schema: logPageSchema,
  });
}

/** GET /api/log/stat or /api/log/self/stat for the same filter. */
export function fetchLogStat(filter: LogFilter, admin: boolean) {
  return apiRequest(admin ? '/api/log/stat' : '/api/log/self/stat', {
    query: logQuery(filter, admin),
    schema: logStatSchema,
  });
}

export const logsQueryOptions = (query: LogListQuery, admin: boolean) =>
  queryOptions({
    queryKey: ['logs', admin ? 'all' : 'self', query],
    queryFn: () => fetchLogs(query, admin),
    placeholderData: keepPreviousData,
  });

export const logStatQueryOptions = (filter: LogFilter, admin: boolean) =>
  queryOptions({
    queryKey: ['logs', admin ? 'all' : 'self', 'stat', filter],
    queryFn: () => fetchLogStat(filter, admin),
    placeholderData: keepPreviousData,
  });
