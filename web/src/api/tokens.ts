import { keepPreviousData, queryOptions } from '@tanstack/react-query';
import { z } from 'zod/mini';

import { apiRequest } from './client';

/** Token status (spec 02 §4; the server derives 3 and 4 from the expiry and the quota). */
export const TOKEN_ENABLED = 1;
export const TOKEN_DISABLED = 2;
export const TOKEN_EXPIRED = 3;
export const TOKEN_EXHAUSTED = 4;

/** `expired_time` of a key that never expires. */
export const NEVER_EXPIRES = -1;

/** A token as the server lists it: `key` is masked (first 4 + asterisks + last 4). */
export const tokenSchema = z.object({
  id: z.int(),
  name: z.catch(z.string(), ''),
  key: z.catch(z.string(), ''),
  status: z.catch(z.int(), TOKEN_ENABLED),
  created_time: z.catch(z.number(), 0),
  accessed_time: z.catch(z.number(), 0),
  expired_time: z.catch(z.number(), NEVER_EXPIRES),
  remain_quota: z.catch(z.number(), 0),
  unlimited_quota: z.catch(z.boolean(), false),
  used_quota: z.catch(z.number(), 0),
  model_limits_enabled: z.catch(z.boolean(), false),
  model_limits: z.catch(z.string(), ''),
  allow_ips: z.catch(z.string(), ''),
  group: z.catch(z.string(), ''),
});
export type Token = z.infer<typeof tokenSchema>;

export const tokenPageSchema = z.object({
  items: z.catch(z.array(tokenSchema), []),
  page: z.catch(z.int(), 1),
  page_size: z.catch(z.int(), 10),
  total: z.catch(z.int(), 0),
});
export type TokenPage = z.infer<typeof tokenPageSchema>;

export interface TokenListQuery {
  keyword: string;
  token: string;
  page: number;
  pageSize: number;
}

/** GET /api/token/ (no filter) or GET /api/token/search (name keyword or key). */
export function fetchTokens({
  keyword,
  token,
  page,
  pageSize,
}: TokenListQuery): Promise<TokenPage> {
  const searching = keyword.trim() !== '' || token.trim() !== '';
  return apiRequest(searching ? '/api/token/search' : '/api/token/', {
    query: {
      keyword: searching ? keyword.trim() : undefined,
      token: searching ? token.trim() : undefined,
      p: page,
      size: pageSize,
    },
    schema: tokenPageSchema,
  });
}

export const tokensQueryOptions = (query: TokenListQuery) =>
  queryOptions({
    queryKey: ['tokens', query],
    queryFn: () => fetchTokens(query),
    placeholderData: keepPreviousData,
  });

/** GET /api/token/{id}. */
export function fetchToken(id: number): Promise<Token> {
  return apiRequest(`/api/token/${id}`, { schema: tokenSchema });
}

export const tokenQueryOptions = (id: number) =>
  queryOptions({ queryKey: ['tokens', 'detail', id], queryFn: () => fetchToken(id) });

/** The editable fields of POST and PUT /api/token/. */
export interface TokenPayload {
  name: string;
  remain_quota: number;
  unlimited_quota: boolean;
  expired_time: number;
  model_limits_enabled: boolean;
  /** Comma-separated on the wire (spec 02 §3). */
  model_limits: string;
  allow_ips: string;
  group: string;
}

/** POST /api/token/. */
export function createToken(payload: TokenPayload): Promise<Token> {
  return apiRequest('/api/token/', { method: 'POST', body: payload, schema: tokenSchema });
}

/** PUT /api/token/ with the id. */
export function updateToken(id: number, payload: TokenPayload): Promise<Token> {
  return apiRequest('/api/token/', {
    method: 'PUT',
    body: { id, ...payload },
    schema: tokenSchema,
  });
}

/** PUT /api/token/?status_only=true: enable (1) or disable (2). */
export function setTokenStatus(id: number, status: number): Promise<Token> {
  return apiRequest('/api/token/', {
    method: 'PUT',
    query: { status_only: true },
    body: { id, status },
    schema: tokenSchema,
  });
}

/** DELETE /api/token/{id}/. */
export function deleteToken(id: number): Promise<void> {
  return apiRequest(`/api/token/${id}/`, { method: 'DELETE' });
}

/** POST /api/token/{id}/key: the full key (`sk-…`), for its owner only. */
export async function revealTokenKey(id: number): Promise<string> {
  const { key } = await apiRequest(`/api/token/${id}/key`, {
    method: 'POST',
    schema: z.object({ key: z.string() }),
  });
  return key.startsWith('sk-') ? key : `sk-${key}`;
}

/** GET /api/user/models: the models the user's groups reach (token editor). */
export const userModelsQueryOptions = queryOptions({
  queryKey: ['self', 'models'],
  queryFn: () => apiRequest('/api/user/models', { schema: z.array(z.string()) }),
  staleTime: 60_000,
});

const groupInfoSchema = z.object({
  desc: z.catch(z.string(), ''),
  ratio: z.catch(z.number(), 1),
});
export type GroupInfo = z.infer<typeof groupInfoSchema>;

/** GET /api/user/self/groups: group → description and ratio (token editor). */
export const selfGroupsQueryOptions = queryOptions({
  queryKey: ['self', 'groups'],
  queryFn: () =>
    apiRequest('/api/user/self/groups', { schema: z.record(z.string(), groupInfoSchema) }),
  staleTime: 60_000,
});
