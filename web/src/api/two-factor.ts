import { z } from 'zod/mini';

import { apiRequest } from './client';
import { userSchema } from './user';
import type { User } from './user';

const statusSchema = z.object({
  enabled: z.boolean(),
  pending: z.catch(z.boolean(), false),
  backup_codes_remaining: z.catch(z.number(), 0),
});
/** GET /api/user/2fa/status. */
export type TwoFactorStatus = z.infer<typeof statusSchema>;

/** The query of the signed-in user's two-factor status. */
export const twoFactorStatusQuery = {
  queryKey: ['two-factor-status'] as const,
  queryFn: (): Promise<TwoFactorStatus> =>
    apiRequest('/api/user/2fa/status', { schema: statusSchema }),
};

const setupSchema = z.object({ secret: z.string(), qr_code_data: z.string() });
/** What the authenticator app needs: the secret and its `otpauth://` URI (not active yet). */
export type TwoFactorSetup = z.infer<typeof setupSchema>;

/**
 * POST /api/user/2fa/setup: a fresh secret, active once confirmed with a code. Needs the
 * account's password ("" for an account made by third-party sign-up, signed in within 5 minutes).
 */
export function setupTwoFactor(password: string): Promise<TwoFactorSetup> {
  return apiRequest('/api/user/2fa/setup', {
    method: 'POST',
    body: { password },
    schema: setupSchema,
  });
}

const codesSchema = z.object({ backup_codes: z.array(z.string()) });

/** POST /api/user/2fa/enable: turns two-factor on; returns the recovery codes (shown once). */
export async function enableTwoFactor(code: string): Promise<string[]> {
  const data = await apiRequest('/api/user/2fa/enable', {
    method: 'POST',
    body: { code },
    schema: codesSchema,
  });
  return data.backup_codes;
}

/** POST /api/user/2fa/disable with a current code or a recovery code. */
export function disableTwoFactor(code: string): Promise<void> {
  return apiRequest('/api/user/2fa/disable', { method: 'POST', body: { code } });
}

/** POST /api/user/2fa/backup_codes: new recovery codes (the old ones stop working). */
export async function regenerateRecoveryCodes(code: string): Promise<string[]> {
  const data = await apiRequest('/api/user/2fa/backup_codes', {
    method: 'POST',
    body: { code },
    schema: codesSchema,
  });
  return data.backup_codes;
}

/** POST /api/user/login/2fa: completes a sign-in that asked for a code. */
export function loginSecondStep(code: string): Promise<User> {
  return apiRequest('/api/user/login/2fa', { method: 'POST', body: { code }, schema: userSchema });
}

/** POST /api/verify: re-verifies this session for 5 minutes (needed to reveal a channel key). */
export function verifySession(code: string): Promise<void> {
  return apiRequest('/api/verify', { method: 'POST', body: { code } });
}

/** DELETE /api/user/{id}/2fa (admin): turns another user's two-factor off. */
export function resetUserTwoFactor(id: number): Promise<void> {
  return apiRequest(`/api/user/${id}/2fa`, { method: 'DELETE' });
}

/** The answer of a first factor asking for the code: `{require_2fa: true}`. */
export const requireTwoFactorSchema = z.object({ require_2fa: z.literal(true) });
