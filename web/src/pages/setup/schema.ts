import type { ParseKeys } from 'i18next';
import { z } from 'zod/mini';

import type { SetupPayload } from '@/api/setup';

/** Error messages are i18n keys of the `setup` namespace, translated where they are shown. */
const message = (key: ParseKeys<'setup'>) => key;

export const usageModes = ['external', 'self', 'demo'] as const;
export type UsageMode = (typeof usageModes)[number];

/** Minimum password length (spec 01 §9). */
const PASSWORD_MIN_LENGTH = 8;

const accountSchema = z
  .object({
    username: z.string().check(z.trim(), z.minLength(1, message('admin.username.required'))),
    password: z
      .string()
      .check(z.minLength(PASSWORD_MIN_LENGTH, message('admin.password.tooShort'))),
    confirmPassword: z.string(),
  })
  .check(
    z.refine((v) => v.password === v.confirmPassword, {
      path: ['confirmPassword'],
      message: message('admin.confirmPassword.mismatch'),
    }),
  );

/**
 * The setup form (spec 01 §5). `account` is absent when the root admin already exists: the form
 * then neither shows nor sends it.
 */
export const setupSchema = z.object({
  usageMode: z.enum(usageModes),
  account: z.optional(accountSchema),
  /** Where users reach the console (pre-filled with this page's origin); blank: not sent. */
  serverAddress: z.optional(
    z.string().check(
      z.trim(),
      z.refine((v) => v === '' || /^https?:\/\/[^/?#\s]+/i.test(v), message('server.invalid')),
    ),
  ),
});
export type SetupValues = z.infer<typeof setupSchema>;

/** The usage mode travels as two booleans (spec 01 §3). */
export function toSetupPayload({ usageMode, account, serverAddress }: SetupValues): SetupPayload {
  const address = (serverAddress ?? '').trim().replace(/\/+$/, '');
  return {
    username: account?.username ?? '',
    password: account?.password ?? '',
    confirmPassword: account?.confirmPassword ?? '',
    SelfUseModeEnabled: usageMode === 'self',
    DemoSiteEnabled: usageMode === 'demo',
    ...(address ? { ServerAddress: address } : {}),
  };
}
