import type { ParseKeys } from 'i18next';
import { z } from 'zod/mini';

const required: ParseKeys<'auth'> = 'login.validation.required';

/** Sign-in form (spec 01 §5): username (or email) and password are both required. */
export const loginSchema = z.object({
  username: z.string().check(z.trim(), z.minLength(1, required)),
  password: z.string().check(z.minLength(1, required)),
});
export type LoginValues = z.infer<typeof loginSchema>;
