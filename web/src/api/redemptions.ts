import { keepPreviousData, queryOptions } from '@tanstack/react-query';
import { z } from 'zod/mini';

import { apiRequest } from './client';

/** Redemption code status (spec 02 §4). */
export const CODE_UNUSED = 1;
export const CODE_DISABLED = 2;
export const CODE_USED = 3;

/** A redemption code as admins see it (the key in full: admins hand codes out). */
export const redemptionSchema = z.object({
  id: z.int(),
  name: z.catch(z.string(), ''),
  key: z.catch(z.string(), ''),
  status: z.catch(z.int(), CODE_UNUSED),
  quota: z.catch(z.number(), 0),
  created_time: z.catch(z.number(), 0),
  redeemed_time: z.catch(z.number(), 0),
  used_user_id: z.catch(z.number(), 0),
});
export type Redemption = z.infer<typeof redemptionSchema>;

export const redemptionPageSchema = z.object({
  items: z.catch(z.array(redemptionSchema), []),
  page: z.catch(z.int(), 1),
  page_size: z.catch(z.int(), 10),
  total: z.catch(z.int(), 0),
});
export type RedemptionPage = z.infer<typeof redemptionPageSchema>;

export interface RedemptionListQuery {
  keyword: string;
  page: number;
  pageSize: number;
}

/** GET /api/redemption/ or /api/redemption/search?keyword= (id or name), server-paged. */
export function fetchRedemptions({
  keyword,
  page,
  pageSize,
}: RedemptionListQuery): Promise<RedemptionPage> {
  const searching = keyword.trim() !== '';
  return apiRequest(searching ? '/api/redemption/search' : '/api/redemption/', {
    query: { keyword: searching ? keyword.trim() : undefined, p: page, page_size: pageSize },
    schema: redemptionPageSchema,
  });
}

export const redemptionsQueryOptions = (query: RedemptionListQuery) =>
  queryOptions({
    queryKey: ['redemptions', query],
    queryFn: () => fetchRedemptions(query),
    placeholderData: keepPreviousData,
  });

/** GET /api/redemption/{id}. */
export const redemptionQueryOptions = (id: number) =>
  queryOptions({
    queryKey: ['redemptions', 'detail', id],
    queryFn: () => apiRequest(`/api/redemption/${id}`, { schema: redemptionSchema }),
  });

/** POST /api/redemption/: the generated codes, in order. */
export function createRedemptions(payload: {
  name: string;
  quota: number;
  count: number;
}): Promise<string[]> {
  return apiRequest('/api/redemption/', {
    method: 'POST',
    body: payload,
    schema: z.array(z.string()),
  });
}

/** PUT /api/redemption/: name and quota of an unused code. */
export function updateRedemption(payload: {
  id: number;
  name: string;
  quota: number;
}): Promise<void> {
  return apiRequest('/api/redemption/', { method: 'PUT', body: payload });
}

/** PUT /api/redemption/?status_only=true: enable (1) or disable (2). */
export function setRedemptionStatus(id: number, status: number): Promise<void> {
  return apiRequest('/api/redemption/', {
    method: 'PUT',
    query: { status_only: true },
    body: { id, status },
  });
}

/** DELETE /api/redemption/{id}/. */
export function deleteRedemption(id: number): Promise<void> {
  return apiRequest(`/api/redemption/${id}/`, { method: 'DELETE' });
}

/** DELETE /api/redemption/invalid: removes used and disabled codes; returns how many. */
export function deleteInvalidRedemptions(): Promise<number> {
  return apiRequest('/api/redemption/invalid', { method: 'DELETE', schema: z.number() });
}
