import { queryOptions, useSuspenseQuery } from '@tanstack/react-query';
import { z } from 'zod/mini';

import { apiRequest } from './client';

const text = z.catch(z.string(), '');
const flag = z.catch(z.boolean(), false);
const number = (fallback: number) => z.catch(z.number(), fallback);

/** A chat link from the status: one `{ name: url }` object per entry. */
const chatsSchema = z.catch(z.array(z.record(z.string(), z.string())), []);

/**
 * GET /api/status `data`. Only `setup` is required: any other missing or malformed field falls
 * back to a neutral default, so an older or newer server still renders the console.
 */
export const statusSchema = z.looseObject({
  setup: z.boolean(),
  system_name: text,
  logo: text,
  footer_html: text,
  version: text,
  quota_per_unit: number(500_000),
  display_in_currency: flag,
  enable_drawing: flag,
  enable_task: flag,
  enable_data_export: flag,
  chats: chatsSchema,
  data_export_default_time: text,
  default_collapse_sidebar: flag,
  docs_link: text,
  chat_link: text,
  chat_link2: text,
  email_verification: flag,
  turnstile_check: flag,
  turnstile_site_key: text,
  github_oauth: flag,
  github_client_id: text,
  oidc_enabled: flag,
  oidc_client_id: text,
  oidc_authorization_endpoint: text,
  wechat_login: flag,
  wechat_qrcode: text,
  telegram_oauth: flag,
  telegram_bot_name: text,
  linuxdo_oauth: flag,
  linuxdo_client_id: text,
  price: number(7.3),
  self_use_mode_enabled: flag,
  register_enabled: z.catch(z.boolean(), true),
  password_login_enabled: z.catch(z.boolean(), true),
  password_register_enabled: z.catch(z.boolean(), true),
  demo_site_enabled: flag,
  database_type: text,
  root_init: flag,
  server_address: text,
  top_up_link: text,
  min_topup: number(1),
  enable_online_topup: flag,
  /** The drawing log shows admins a banner while the Midjourney callback is off. */
  mj_notify_enabled: flag,
});
export type Status = z.infer<typeof statusSchema>;

/** GET /api/status: the public system status, mirrored into local storage (spec 01 §3). */
export async function fetchStatus(): Promise<Status> {
  const status = await apiRequest('/api/status', { schema: statusSchema });
  mirrorStatus(status);
  return status;
}

export const statusQueryOptions = queryOptions({
  queryKey: ['status'],
  queryFn: fetchStatus,
  staleTime: 5 * 60_000,
  meta: { silent: true },
});

/** The loaded status; only valid below the status gate, which waits for it. */
export function useStatus(): Status {
  return useSuspenseQuery(statusQueryOptions).data;
}

/**
 * Keeps the spec's local storage keys for the status (`status`, `system_name`, `logo`, …), flags
 * as the text `true`/`false`, so branding can be shown before the next status answer.
 */
function mirrorStatus(status: Status): void {
  try {
    localStorage.setItem('status', JSON.stringify(status));
    localStorage.setItem('system_name', status.system_name);
    localStorage.setItem('logo', status.logo);
    localStorage.setItem('footer_html', status.footer_html);
    localStorage.setItem('quota_per_unit', String(status.quota_per_unit));
    localStorage.setItem('display_in_currency', String(status.display_in_currency));
    localStorage.setItem('enable_drawing', String(status.enable_drawing));
    localStorage.setItem('enable_task', String(status.enable_task));
    localStorage.setItem('enable_data_export', String(status.enable_data_export));
    localStorage.setItem('chats', JSON.stringify(status.chats));
  } catch {
    // Storage full or disabled: the console works from the query cache alone.
  }
}
