import { z } from 'zod/mini';

import { apiRequest } from './client';
import { requireTwoFactorSchema } from './two-factor';
import { userSchema } from './user';
import type { User } from './user';

export interface Credentials {
  username: string;
  password: string;
}

/** A first factor's outcome: signed in, or a two-factor code is needed (no session yet). */
export type SignInResult = { kind: 'user'; user: User } | { kind: 'twoFactor' };

const signInSchema = z.union([requireTwoFactorSchema, userSchema]);

/** Reads a first factor's `data`: the user, or `{require_2fa: true}`. */
export function signInResult(data: z.infer<typeof signInSchema>): SignInResult {
  return 'require_2fa' in data && data.require_2fa === true
    ? { kind: 'twoFactor' }
    : { kind: 'user', user: data as User };
}

/**
 * POST /api/user/login?turnstile=: signs in with a password. With two-factor on the answer is
 * `{require_2fa: true}` and POST /api/user/login/2fa follows (the /login/2fa page).
 */
export async function login(credentials: Credentials, turnstile?: string): Promise<SignInResult> {
  return signInResult(
    await apiRequest('/api/user/login', {
      method: 'POST',
      body: credentials,
      query: { turnstile: turnstile || undefined },
      schema: signInSchema,
    }),
  );
}

/** GET /api/user/logout: ends the server session. */
export function logout(): Promise<void> {
  return apiRequest('/api/user/logout');
}

/** The body of POST /api/user/register (spec 01 §7). */
export interface RegisterPayload {
  username: string;
  password: string;
  password2: string;
  email: string;
  verification_code: string;
  aff_code: string;
}

/** POST /api/user/register?turnstile=: creates an account. */
export function register(payload: RegisterPayload, turnstile?: string): Promise<void> {
  return apiRequest('/api/user/register', {
    method: 'POST',
    body: payload,
    query: { turnstile: turnstile || undefined },
  });
}

/** GET /api/verification: mails a verification code to `email`. */
export function sendVerificationCode(email: string, turnstile?: string): Promise<void> {
  return apiRequest('/api/verification', {
    query: { email, turnstile: turnstile || undefined },
  });
}

/** GET /api/reset_password: mails a reset link (the server answers success for any address). */
export function sendResetMail(email: string, turnstile?: string): Promise<void> {
  return apiRequest('/api/reset_password', {
    query: { email, turnstile: turnstile || undefined },
  });
}

/** POST /api/user/reset: confirms a reset link and returns the newly issued password. */
export function confirmReset(email: string, token: string): Promise<string> {
  return apiRequest('/api/user/reset', {
    method: 'POST',
    body: { email, token },
    schema: z.string(),
  });
}
