import { keepPreviousData, queryOptions } from '@tanstack/react-query';
import { z } from 'zod/mini';

import { apiRequest } from './client';
import { userSchema } from './user';
import type { User } from './user';

/** A page of users: `p` is 1-based. */
export const userPageSchema = z.object({
  items: z.catch(z.array(userSchema), []),
  page: z.catch(z.int(), 1),
  page_size: z.catch(z.int(), 10),
  total: z.catch(z.int(), 0),
});
export type UserPage = z.infer<typeof userPageSchema>;

export interface UserListQuery {
  keyword: string;
  group: string;
  page: number;
  pageSize: number;
}

/** GET /api/user/ (no filter) or GET /api/user/search (keyword or group). */
export function fetchUsers({ keyword, group, page, pageSize }: UserListQuery): Promise<UserPage> {
  const searching = keyword.trim() !== '' || group.trim() !== '';
  return apiRequest(searching ? '/api/user/search' : '/api/user/', {
    query: {
      keyword: searching ? keyword.trim() : undefined,
      group: searching ? group.trim() : undefined,
      p: page,
      page_size: pageSize,
    },
    schema: userPageSchema,
  });
}

export const usersQueryOptions = (query: UserListQuery) =>
  queryOptions({
    queryKey: ['users', query],
    queryFn: () => fetchUsers(query),
    placeholderData: keepPreviousData,
  });

/** GET /api/user/{id}. */
export function fetchUser(id: number): Promise<User> {
  return apiRequest(`/api/user/${id}`, { schema: userSchema });
}

export const userQueryOptions = (id: number) =>
  queryOptions({ queryKey: ['users', 'detail', id], queryFn: () => fetchUser(id) });

export interface NewUserPayload {
  username: string;
  display_name: string;
  password: string;
}

/** POST /api/user/: an admin creates an ordinary user. */
export function createUser(payload: NewUserPayload): Promise<void> {
  return apiRequest('/api/user/', { method: 'POST', body: payload });
}

export interface UserUpdatePayload {
  id: number;
  username?: string;
  display_name?: string;
  password?: string;
  group?: string;
  quota?: number;
  /** The balance the editor showed: the server applies `quota - quota_before`. */
  quota_before?: number;
}

/** PUT /api/user/: an admin edits a user; returns the stored user. */
export function updateUser(payload: UserUpdatePayload): Promise<User> {
  return apiRequest('/api/user/', { method: 'PUT', body: payload, schema: userSchema });
}

export const manageActions = ['promote', 'demote', 'disable', 'enable', 'delete'] as const;
export type ManageAction = (typeof manageActions)[number];

export const manageResultSchema = z.object({
  role: z.int(),
  status: z.int(),
  DeletedAt: z.catch(z.nullable(z.number()), null),
});
export type ManageResult = z.infer<typeof manageResultSchema>;

/** POST /api/user/manage: promote, demote, disable, enable or delete (deregister) a user. */
export function manageUser(id: number, action: ManageAction): Promise<ManageResult> {
  return apiRequest('/api/user/manage', {
    method: 'POST',
    body: { id, action },
    schema: manageResultSchema,
  });
}

/**
 * DELETE /api/user/{id}/2fa: turns a user's two-factor sign-in off (they lost their
 * authenticator and recovery codes) and ends their sessions; audited.
 */
export function resetUserTwoFactor(id: number): Promise<void> {
  return apiRequest(`/api/user/${id}/2fa`, { method: 'DELETE' });
}

/** GET /api/group/: the group names (the route may not exist yet: callers fall back to text). */
export function fetchGroups(): Promise<string[]> {
  return apiRequest('/api/group/', { schema: z.array(z.string()) });
}

export const groupsQueryOptions = queryOptions({
  queryKey: ['groups'],
  queryFn: fetchGroups,
  retry: false,
  staleTime: 5 * 60_000,
  meta: { silent: true },
});
