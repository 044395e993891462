import type { ParseKeys } from 'i18next';
import { z } from 'zod/mini';

import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, USERNAME_MAX_LENGTH } from '@/lib/account-rules';

/** Error messages are i18n keys of the `auth` namespace. */
const message = (key: ParseKeys<'auth'>) => key;

/**
 * The registration form (spec 01 §5): username ≤ 12, password 8–20, matching confirmation; with
 * email verification on, an email and its code.
 */
export function registerSchema(emailVerification: boolean) {
  const required = (key: ParseKeys<'auth'>) =>
    emailVerification ? z.string().check(z.trim(), z.minLength(1, message(key))) : z.string();
  return z
    .object({
      username: z
        .string()
        .check(
          z.trim(),
          z.minLength(1, message('register.validation.usernameRequired')),
          z.maxLength(USERNAME_MAX_LENGTH, message('register.validation.usernameTooLong')),
        ),
      password: z
        .string()
        .check(
          z.minLength(PASSWORD_MIN_LENGTH, message('register.validation.passwordTooShort')),
          z.maxLength(PASSWORD_MAX_LENGTH, message('register.validation.passwordTooLong')),
        ),
      password2: z.string(),
      email: emailVerification
        ? z
            .string()
            .check(
              z.trim(),
              z.minLength(1, message('register.validation.emailRequired')),
              z.email(message('register.validation.emailInvalid')),
            )
        : z.string(),
      verification_code: required('register.validation.codeRequired'),
    })
    .check(
      z.refine((v) => v.password === v.password2, {
        path: ['password2'],
        message: message('register.validation.mismatch'),
      }),
    );
}
export type RegisterValues = z.infer<ReturnType<typeof registerSchema>>;

/** The email of the send-code button and of the reset request. */
export const emailSchema = z
  .string()
  .check(
    z.trim(),
    z.minLength(1, message('register.validation.emailRequired')),
    z.email(message('register.validation.emailInvalid')),
  );

/** The reset request form (spec 01 §2): one email. */
export const resetRequestSchema = z.object({ email: emailSchema });
export type ResetRequestValues = z.infer<typeof resetRequestSchema>;
