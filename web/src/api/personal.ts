import { queryOptions } from '@tanstack/react-query';
import { z } from 'zod/mini';

import { useSession } from '@/stores/session';

import { apiRequest } from './client';
import { userSchema } from './user';
import type { NotifyType, User } from './user';

/** GET /api/user/self: the signed-in user, fresh from the server; also refreshes `user`. */
export async function fetchSelf(): Promise<User> {
  const user = await apiRequest('/api/user/self', { schema: userSchema });
  useSession.getState().setUser(user);
  return user;
}

export const selfQueryOptions = queryOptions({ queryKey: ['self'], queryFn: fetchSelf });

/** PUT /api/user/self with the original and the new password. */
export function changePassword(originalPassword: string, password: string): Promise<void> {
  return apiRequest('/api/user/self', {
    method: 'PUT',
    body: { original_password: originalPassword, password },
  });
}

/**
 * DELETE /api/user/self: deregisters the account, confirmed with the password or a two-factor
 * code (an account with neither: a third-party sign-in within the last 5 minutes).
 */
export function deleteSelf(proof: { password: string; code: string }): Promise<void> {
  return apiRequest('/api/user/self', { method: 'DELETE', body: proof });
}

/** GET /api/user/token: issues a new system access token (the old one stops working). */
export function resetAccessToken(): Promise<string> {
  return apiRequest('/api/user/token', { schema: z.string() });
}

/** GET /api/user/aff: the user's invite code. */
export function fetchAffCode(): Promise<string> {
  return apiRequest('/api/user/aff', { schema: z.string() });
}

export const affCodeQueryOptions = queryOptions({
  queryKey: ['self', 'aff'],
  queryFn: fetchAffCode,
  staleTime: Infinity,
});

/** POST /api/user/aff_transfer: moves invite earnings into the balance. */
export function transferAffQuota(quota: number): Promise<void> {
  return apiRequest('/api/user/aff_transfer', { method: 'POST', body: { quota } });
}

/** The body of PUT /api/user/setting; an empty webhook secret keeps the stored one. */
export interface UserSettingPayload {
  notify_type: NotifyType;
  quota_warning_threshold: number;
  webhook_url: string;
  webhook_secret: string;
  notification_email: string;
  accept_unset_model_ratio_model: boolean;
}

/** PUT /api/user/setting: notification settings. */
export function updateUserSetting(payload: UserSettingPayload): Promise<void> {
  return apiRequest('/api/user/setting', { method: 'PUT', body: payload });
}

/** GET /api/oauth/email/bind: binds `email` with the code mailed to it. */
export function bindEmail(email: string, code: string): Promise<void> {
  return apiRequest('/api/oauth/email/bind', { query: { email, code } });
}
