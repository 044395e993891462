import { keepPreviousData, queryOptions } from '@tanstack/react-query';
import { z } from 'zod/mini';

import { apiRequest } from './client';

/** Granularities of the dashboard (spec 02 §9); `hour` is the default. */
export const granularities = ['hour', 'day', 'week'] as const;
export type Granularity = (typeof granularities)[number];

export const isGranularity = (value: string): value is Granularity =>
  (granularities as readonly string[]).includes(value);

const count = z.catch(z.number(), 0);

/** One hourly aggregate (new-api's quota_data): a model's requests, tokens and quota in an hour. */
export const quotaDataSchema = z.object({
  model_name: z.catch(z.string(), ''),
  user_id: count,
  username: z.catch(z.string(), ''),
  /** Start of the hour, unix seconds. */
  created_at: count,
  count: count,
  quota: count,
  token_used: count,
  prompt_tokens: count,
  completion_tokens: count,
});
export type QuotaData = z.infer<typeof quotaDataSchema>;

/** Tokens of a row: `token_used`, or prompt + completion when only those are sent. */
export const rowTokens = (row: QuotaData): number =>
  row.token_used || row.prompt_tokens + row.completion_tokens;

export interface DashboardQuery {
  start: number;
  end: number;
  granularity: Granularity;
  /** Admin only: one user's data; empty for everyone. */
  username: string;
}

/** GET /api/data/ (admin: all users, or one by username) or GET /api/data/self. */
export function fetchDashboard(query: DashboardQuery, admin: boolean): Promise<QuotaData[]> {
  const username = admin ? query.username.trim() : '';
  return apiRequest(admin ? '/api/data/' : '/api/data/self', {
    query: {
      start_timestamp: query.start,
      end_timestamp: query.end,
      default_time: query.granularity,
      username: username || undefined,
    },
    schema: z.catch(z.array(quotaDataSchema), []),
  });
}

export const dashboardQueryOptions = (query: DashboardQuery, admin: boolean) =>
  queryOptions({
    queryKey: ['dashboard', admin ? 'all' : 'self', query],
    queryFn: () => fetchDashboard(query, admin),
    placeholderData: keepPreviousData,
  });

/** GET /api/data/users (admin): hourly aggregates per user over every model. */
export function fetchDashboardUsers(start: number, end: number): Promise<QuotaData[]> {
  return apiRequest('/api/data/users', {
    query: { start_timestamp: start, end_timestamp: end },
    schema: z.catch(z.array(quotaDataSchema), []),
  });
}

export const dashboardUsersQueryOptions = (start: number, end: number) =>
  queryOptions({
    queryKey: ['dashboard', 'users', start, end],
    queryFn: () => fetchDashboardUsers(start, end),
    placeholderData: keepPreviousData,
  });

/** One channel's prompt-cache figures (GET /api/dashboard/cache_hit_rate). */
export const cacheHitRateSchema = z.object({
  channel_id: count,
  channel_name: z.catch(z.string(), ''),
  prompt_tokens: count,
  cached_tokens: count,
  /** cached_tokens / prompt_tokens, 0 to 1. */
  hit_rate: count,
});
export type CacheHitRate = z.infer<typeof cacheHitRateSchema>;

/** GET /api/dashboard/cache_hit_rate (admin): the prompt-cache hit rate per channel. */
export function fetchCacheHitRate(start: number, end: number): Promise<CacheHitRate[]> {
  return apiRequest('/api/dashboard/cache_hit_rate', {
    query: { start_timestamp: start, end_timestamp: end },
    schema: z.catch(z.array(cacheHitRateSchema), []),
  });
}

export const cacheHitRateQueryOptions = (start: number, end: number) =>
  queryOptions({
    queryKey: ['dashboard', 'cache_hit_rate', start, end],
    queryFn: () => fetchCacheHitRate(start, end),
    placeholderData: keepPreviousData,
  });
