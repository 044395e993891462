import { apiRequest } from './client';
import { userSchema } from './user';
import type { User } from './user';

export interface Credentials {
  username: string;
  password: string;
}

/** POST /api/user/login: signs in with a password and returns the user. */
export function login(credentials: Credentials): Promise<User> {
  return apiRequest('/api/user/login', { method: 'POST', body: credentials, schema: userSchema });
}

/** GET /api/user/logout: ends the server session. */
export function logout(): Promise<void> {
  return apiRequest('/api/user/logout');
}
