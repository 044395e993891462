import type { ParseKeys } from 'i18next';
import { z } from 'zod/mini';

import { NEVER_EXPIRES } from '@/api/tokens';
import type { Token, TokenPayload } from '@/api/tokens';
import { formatDateTime, parseDateTime } from '@/lib/dates';

/** Error messages are i18n keys of the `tokens` namespace. */
const message = (key: ParseKeys<'tokens'>) => key;

/** Longest token name the server accepts. */
export const TOKEN_NAME_MAX_LENGTH = 50;
/** Quota presets (spec 02 §9): $1, $10, $50, $100, $500, $1000 at 500 000 per unit. */
export const QUOTA_PRESETS = [
  500_000, 5_000_000, 25_000_000, 50_000_000, 250_000_000, 500_000_000,
] as const;
/** Batch-count presets (spec 02 §9). */
export const COUNT_PRESETS = [10, 20, 30, 100] as const;
/** A new token's quota (spec 02 §9). */
export const DEFAULT_REMAIN_QUOTA = 500_000;
/** Length of the random suffix batch names get from the second token on. */
export const NAME_SUFFIX_LENGTH = 6;
/** The text of "never expires" in the expiry field. */
export const NEVER_TEXT = String(NEVER_EXPIRES);

/** `-1` (never) or Unix seconds for the expiry text, null when it does not parse. */
export function parseExpiry(text: string): number | null {
  const trimmed = text.trim();
  if (trimmed === NEVER_TEXT) return NEVER_EXPIRES;
  return parseDateTime(trimmed);
}

/** The expiry field's text for `expired_time`. */
export const expiryText = (expiredTime: number): string =>
  expiredTime === NEVER_EXPIRES ? NEVER_TEXT : formatDateTime(expiredTime);

export const expiryShortcuts = ['never', 'hour', 'day', 'month'] as const;
export type ExpiryShortcut = (typeof expiryShortcuts)[number];

/** The expiry text a shortcut sets, counted from `now` (Unix ms). */
export function shortcutExpiry(shortcut: ExpiryShortcut, now = Date.now()): string {
  const date = new Date(now);
  switch (shortcut) {
    case 'never':
      return NEVER_TEXT;
    case 'hour':
      date.setHours(date.getHours() + 1);
      break;
    case 'day':
      date.setDate(date.getDate() + 1);
      break;
    case 'month':
      date.setMonth(date.getMonth() + 1);
      break;
  }
  return formatDateTime(Math.floor(date.getTime() / 1000));
}

/**
 * The token editor (spec 02 §5): a name, an expiry of `-1` or `yyyy-MM-dd HH:mm:ss`
 * (过期时间格式错误！), an integer quota ≥ 0, a positive integer batch count; model limits are a
 * list here and comma text on the wire.
 */
export const tokenFormSchema = z.object({
  name: z
    .string()
    .check(
      z.trim(),
      z.minLength(1, message('validation.nameRequired')),
      z.maxLength(TOKEN_NAME_MAX_LENGTH, message('validation.nameTooLong')),
    ),
  expiry: z
    .string()
    .check(
      z.refine((text) => parseExpiry(text) !== null, { message: message('validation.expiry') }),
    ),
  remain_quota: z
    .int(message('validation.quotaInteger'))
    .check(z.gte(0, message('validation.quotaInteger'))),
  unlimited_quota: z.boolean(),
  count: z.int(message('validation.count')).check(z.gte(1, message('validation.count'))),
  model_limits_enabled: z.boolean(),
  model_limits: z.array(z.string()),
  allow_ips: z.string(),
  group: z.string(),
});
export type TokenFormValues = z.infer<typeof tokenFormSchema>;

/** A new token's form (spec 02 §9: quota 500 000, never expires, one token). */
export const newTokenValues: TokenFormValues = {
  name: '',
  expiry: NEVER_TEXT,
  remain_quota: DEFAULT_REMAIN_QUOTA,
  unlimited_quota: false,
  count: 1,
  model_limits_enabled: false,
  model_limits: [],
  allow_ips: '',
  group: '',
};

/** The form of an existing token. */
export function tokenValues(token: Token): TokenFormValues {
  return {
    name: token.name,
    expiry: expiryText(token.expired_time),
    remain_quota: token.remain_quota,
    unlimited_quota: token.unlimited_quota,
    count: 1,
    model_limits_enabled: token.model_limits_enabled,
    model_limits: token.model_limits
      .split(',')
      .map((m) => m.trim())
      .filter(Boolean),
    allow_ips: token.allow_ips,
    group: token.group,
  };
}

/** The wire payload of a valid form (`expiry` parses: the schema checked it). */
export function toTokenPayload(values: TokenFormValues): TokenPayload {
  return {
    name: values.name,
    remain_quota: values.remain_quota,
    unlimited_quota: values.unlimited_quota,
    expired_time: parseExpiry(values.expiry) ?? NEVER_EXPIRES,
    model_limits_enabled: values.model_limits_enabled,
    model_limits: values.model_limits.join(','),
    allow_ips: values.allow_ips.trim(),
    group: values.group,
  };
}

const ALPHANUMERIC = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** `length` random letters and digits (batch name suffixes). */
export function randomSuffix(length = NAME_SUFFIX_LENGTH): string {
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  return Array.from(bytes, (b) => ALPHANUMERIC[b % ALPHANUMERIC.length]).join('');
}

/** The name of the `index`-th token of a batch: the name, then `name-xxxxxx` from the second. */
export const batchName = (name: string, index: number): string =>
  index === 0 ? name : `${name}-${randomSuffix()}`;

/**
 * Creates `count` tokens one after another and stops at the first failure (spec 02 §5).
 * Returns how many were created and the failure, if any.
 */
export async function createBatch(
  payload: TokenPayload,
  count: number,
  create: (payload: TokenPayload) => Promise<unknown>,
): Promise<{ created: number; error?: unknown }> {
  for (let i = 0; i < count; i++) {
    try {
      await create({ ...payload, name: batchName(payload.name, i) });
    } catch (error) {
      return { created: i, error };
    }
  }
  return { created: count };
}
