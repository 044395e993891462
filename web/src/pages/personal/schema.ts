import type { ParseKeys } from 'i18next';
import { z } from 'zod/mini';

import { notifyTypes } from '@/api/user';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '@/lib/account-rules';

/** Error messages are i18n keys of the `personal` namespace. */
const message = (key: ParseKeys<'personal'>) => key;

/** Change password (spec 01 §5). */
export const passwordSchema = z
  .object({
    original: z.string().check(z.minLength(1, message('password.validation.originalRequired'))),
    password: z
      .string()
      .check(
        z.minLength(1, message('password.validation.newRequired')),
        z.minLength(PASSWORD_MIN_LENGTH, message('password.validation.tooShort')),
        z.maxLength(PASSWORD_MAX_LENGTH, message('password.validation.tooLong')),
      ),
    confirm: z.string(),
  })
  .check(
    z.refine((v) => v.password === '' || v.password !== v.original, {
      path: ['password'],
      message: message('password.validation.same'),
    }),
    z.refine((v) => v.password === v.confirm, {
      path: ['confirm'],
      message: message('password.validation.mismatch'),
    }),
  );
export type PasswordValues = z.infer<typeof passwordSchema>;

/** Bind email (spec 01 §5): email and code are required. */
export const bindEmailSchema = z.object({
  email: z
    .string()
    .check(
      z.trim(),
      z.minLength(1, message('bindEmail.validation.emailRequired')),
      z.email(message('bindEmail.validation.emailInvalid')),
    ),
  code: z.string().check(z.trim(), z.minLength(1, message('bindEmail.validation.codeRequired'))),
});
export type BindEmailValues = z.infer<typeof bindEmailSchema>;

/**
 * Delete account: the typed text must be the username (spec 01 §5), with the password or a
 * two-factor code as proof (the server decides which it needs).
 */
export const deleteAccountSchema = (username: string) =>
  z.object({
    confirmation: z
      .string()
      .check(z.refine((v) => v === username, message('delete.validation.mismatch'))),
    password: z.string(),
    code: z.string().check(z.trim()),
  });
export type DeleteAccountValues = z.infer<ReturnType<typeof deleteAccountSchema>>;

/** Transfer invite earnings: at least one quota unit (spec 01 §5), at most what is pending. */
export const transferSchema = (minimum: number) =>
  z.object({
    quota: z
      .int(message('invite.transfer.validation.integer'))
      .check(z.gte(minimum, message('invite.transfer.validation.minimum'))),
  });
export type TransferValues = z.infer<ReturnType<typeof transferSchema>>;

/** Quota warning presets (spec 01 §9), labelled as the spec labels them. */
export const thresholdPresets = [
  { value: 100_000, label: '0.2$' },
  { value: 500_000, label: '1$' },
  { value: 1_000_000, label: '5$' },
  { value: 5_000_000, label: '10$' },
] as const;

/**
 * Notification settings (spec 01 §3, §5): a webhook needs an https URL; the secret is write-only
 * (empty keeps the stored one); the threshold is a number ≥ 0.
 */
export const notificationSchema = z
  .object({
    notify_type: z.enum(notifyTypes),
    quota_warning_threshold: z
      .number(message('notify.validation.threshold'))
      .check(z.gte(0, message('notify.validation.threshold'))),
    webhook_url: z.string().check(z.trim()),
    webhook_secret: z.string(),
    notification_email: z.string().check(
      z.trim(),
      z.refine((v) => v === '' || z.email().safeParse(v).success, {
        message: message('notify.validation.email'),
      }),
    ),
    accept_unset_model_ratio_model: z.boolean(),
  })
  .check(
    z.refine((v) => v.notify_type !== 'webhook' || v.webhook_url !== '', {
      path: ['webhook_url'],
      message: message('notify.validation.webhookRequired'),
    }),
    z.refine((v) => v.webhook_url === '' || v.webhook_url.startsWith('https://'), {
      path: ['webhook_url'],
      message: message('notify.validation.webhookHttps'),
    }),
  );
export type NotificationValues = z.infer<typeof notificationSchema>;
