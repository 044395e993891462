import { z } from 'zod/mini';

/** Roles (spec 01 §6): role ≥ 10 is an admin, ≥ 100 the super admin. */
export const ROLE_COMMON = 1;
export const ROLE_ADMIN = 10;
export const ROLE_ROOT = 100;

/** User statuses (spec 01 §4): 1 activated, 2 banned; 3 exists but has no label. */
export const STATUS_ENABLED = 1;
export const STATUS_DISABLED = 2;

const text = z.catch(z.string(), '');
const count = z.catch(z.number(), 0);

/**
 * A user as the server shows it (login, /api/user/self, admin list). Only id and username are
 * required; the rest falls back to neutral values, so a stored user from an older console still
 * parses. The same shape is kept locally as `user`.
 */
export const userSchema = z.looseObject({
  id: z.int(),
  username: z.string(),
  display_name: text,
  role: z.catch(z.int(), ROLE_COMMON),
  status: z.catch(z.int(), STATUS_ENABLED),
  group: z.catch(z.string(), 'default'),
  email: text,
  github_id: text,
  oidc_id: text,
  wechat_id: text,
  telegram_id: text,
  linux_do_id: text,
  quota: count,
  used_quota: count,
  request_count: count,
  aff_code: text,
  aff_count: count,
  aff_quota: count,
  aff_history_quota: count,
  inviter_id: count,
  /** Personal settings as JSON text (see {@link parseUserSetting}). */
  setting: text,
  created_at: count,
  /** Unix seconds of deregistration; null while the account is active. */
  DeletedAt: z.catch(z.nullable(z.number()), null),
});
export type User = z.infer<typeof userSchema>;

export const notifyTypes = ['email', 'webhook'] as const;
export type NotifyType = (typeof notifyTypes)[number];

/** Default quota warning threshold (spec 01 §9). */
export const DEFAULT_QUOTA_WARNING_THRESHOLD = 500_000;

/** The user's `setting` JSON (spec 01 §3); the server blanks the secret and says if one is set. */
export const userSettingSchema = z.object({
  notify_type: z.catch(z.enum(notifyTypes), 'email'),
  quota_warning_threshold: z.catch(z.number(), DEFAULT_QUOTA_WARNING_THRESHOLD),
  webhook_url: text,
  webhook_secret_set: z.catch(z.boolean(), false),
  notification_email: text,
  accept_unset_model_ratio_model: z.catch(z.boolean(), false),
});
export type UserSetting = z.infer<typeof userSettingSchema>;

/**
 * Reads the `setting` JSON text; empty or broken text gives the defaults. The server writes a
 * threshold of 0 for a setting never saved, so 0 reads as unset (the default), as new-api does.
 */
export function parseUserSetting(setting: string): UserSetting {
  let raw: unknown;
  try {
    raw = setting ? JSON.parse(setting) : {};
  } catch {
    raw = {};
  }
  const parsed = userSettingSchema.parse(typeof raw === 'object' && raw !== null ? raw : {});
  if (parsed.quota_warning_threshold <= 0) {
    parsed.quota_warning_threshold = DEFAULT_QUOTA_WARNING_THRESHOLD;
  }
  return parsed;
}

/** Whether the user may see the admin menu group. */
export const isAdmin = (user: User | null): boolean => (user?.role ?? 0) >= ROLE_ADMIN;

/** Whether the account was deregistered. */
export const isDeregistered = (user: Pick<User, 'DeletedAt'>): boolean => user.DeletedAt !== null;
