/** Minimum password length (spec 01 §9). */
export const PASSWORD_MIN_LENGTH = 8;
/** Maximum password length (spec 01 §9: the placeholder and message table). */
export const PASSWORD_MAX_LENGTH = 20;
/** Maximum username length at registration (spec 01 §9). */
export const USERNAME_MAX_LENGTH = 12;

/**
 * The incumbent's default root credentials (spec 01 §2: signing in with them shows a warning).
 * Tollgate's own setup never creates them (the password is chosen there and has at least 8
 * characters), but an account carried over with them keeps them until it is changed.
 */
export const DEFAULT_ROOT_USERNAME = 'root';
export const DEFAULT_ROOT_PASSWORD = '123456';

/** Whether a sign-in as `username`/`password` used the default root credentials. */
export function usedDefaultRootPassword(username: string, password: string): boolean {
  return username.trim() === DEFAULT_ROOT_USERNAME && password === DEFAULT_ROOT_PASSWORD;
}
