import { z } from 'zod/mini';

import { apiRequest } from './client';
import { userSchema } from './user';
import type { User } from './user';

export interface Credentials {
  username: string;
  password: string;
}

/** POST /api/user/login?turnstile=: signs in with a password and returns the user. */
export function login(credentials: Credentials, turnstile?: string): Promise<User> {
  return apiRequest('/api/user/login', {
    method: 'POST',
    body: credentials,
    query: { turnstile: turnstile || undefined },
    schema: userSchema,
  });
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
