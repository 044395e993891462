import type { ParseKeys } from 'i18next';
import { z } from 'zod/mini';

import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, USERNAME_MAX_LENGTH } from '@/lib/account-rules';

/** Error messages are i18n keys of the `users` namespace. */
const message = (key: ParseKeys<'users'>) => key;

/** Longest display name the server accepts. */
export const DISPLAY_NAME_MAX_LENGTH = 20;

/** Add user (spec 01 §5): username and password are required (用户名和密码不能为空！). */
export const addUserSchema = z.object({
  username: z
    .string()
    .check(
      z.trim(),
      z.minLength(1, message('add.validation.required')),
      z.maxLength(USERNAME_MAX_LENGTH, message('validation.usernameTooLong')),
    ),
  display_name: z
    .string()
    .check(
      z.trim(),
      z.maxLength(DISPLAY_NAME_MAX_LENGTH, message('validation.displayNameTooLong')),
    ),
  password: z
    .string()
    .check(
      z.minLength(1, message('add.validation.required')),
      z.minLength(PASSWORD_MIN_LENGTH, message('validation.passwordTooShort')),
      z.maxLength(PASSWORD_MAX_LENGTH, message('validation.passwordTooLong')),
    ),
});
export type AddUserValues = z.infer<typeof addUserSchema>;

/**
 * Edit user (spec 01 §5): an empty password keeps the current one, a new one has at least 8
 * characters; the quota is an integer.
 */
export const editUserSchema = z.object({
  username: z
    .string()
    .check(
      z.trim(),
      z.minLength(1, message('validation.usernameRequired')),
      z.maxLength(USERNAME_MAX_LENGTH, message('validation.usernameTooLong')),
    ),
  display_name: z
    .string()
    .check(
      z.trim(),
      z.maxLength(DISPLAY_NAME_MAX_LENGTH, message('validation.displayNameTooLong')),
    ),
  password: z.string().check(
    z.refine((p) => p === '' || p.length >= PASSWORD_MIN_LENGTH, {
      message: message('validation.passwordTooShort'),
    }),
    z.maxLength(PASSWORD_MAX_LENGTH, message('validation.passwordTooLong')),
  ),
  group: z.string().check(z.trim(), z.minLength(1, message('validation.groupRequired'))),
  quota: z.int(message('validation.quotaInteger')),
});
export type EditUserValues = z.infer<typeof editUserSchema>;

/** The add-quota dialog: any integer, negatives take quota away (spec 01 §5). */
export const addQuotaSchema = z.object({
  amount: z.int(message('validation.quotaInteger')),
});
export type AddQuotaValues = z.infer<typeof addQuotaSchema>;
