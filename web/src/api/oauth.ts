import { z } from 'zod/mini';

import { apiEnvelope } from './client';
import { requireTwoFactorSchema } from './two-factor';
import { userSchema } from './user';
import type { User } from './user';

/** The providers signed in by redirecting the browser (authorization-code flow). */
export type RedirectProvider = 'github' | 'oidc' | 'linuxdo';

const startSchema = z.object({ data: z.string(), authorize_url: z.string() });

/**
 * GET /api/oauth/state?provider=&aff=: starts a sign-in (or a binding, when signed in) and returns
 * the provider's sign-in page, built by the server with the client id, the callback address,
 * the state, and the nonce and PKCE challenge where the provider takes them.
 */
export async function startOAuth(provider: RedirectProvider, aff: string): Promise<string> {
  const answer = await apiEnvelope('/api/oauth/state', {
    query: { provider, aff: aff || undefined },
    schema: startSchema,
  });
  return answer.authorize_url;
}

const finishSchema = z.object({
  message: z.catch(z.string(), ''),
  data: z.union([requireTwoFactorSchema, userSchema]),
});

/**
 * A third-party sign-in's result: the user, and whether it bound the signed-in account; or, for
 * an account with two-factor on, that the code is needed (POST /api/user/login/2fa).
 */
export type OAuthResult = { twoFactor: false; user: User; bound: boolean } | { twoFactor: true };

function result(answer: z.infer<typeof finishSchema>): OAuthResult {
  const data = answer.data;
  if ('require_2fa' in data && data.require_2fa === true) return { twoFactor: true };
  return { twoFactor: false, user: data as User, bound: answer.message === 'bind' };
}

/** GET /api/oauth/{provider}?code&state: signs in, or binds (message `bind`). */
export async function finishOAuth(
  provider: RedirectProvider,
  code: string,
  state: string,
): Promise<OAuthResult> {
  return result(
    await apiEnvelope(`/api/oauth/${provider}`, { query: { code, state }, schema: finishSchema }),
  );
}

/** GET /api/oauth/wechat?code= (sign in) or /api/oauth/wechat/bind?code=. */
export async function wechatAuth(code: string, bind: boolean, aff = ''): Promise<OAuthResult> {
  return result(
    await apiEnvelope(bind ? '/api/oauth/wechat/bind' : '/api/oauth/wechat', {
      query: { code, aff: aff || undefined },
      schema: finishSchema,
    }),
  );
}

/** The fields the Telegram login widget hands over. */
export type TelegramFields = Record<string, string | number | undefined>;

/** GET /api/oauth/telegram/login (sign in) or /api/oauth/telegram/bind with the widget's fields. */
export async function telegramAuth(
  fields: TelegramFields,
  bind: boolean,
  aff = '',
): Promise<OAuthResult> {
  const query: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(fields)) {
    if (value !== undefined) query[key] = String(value);
  }
  if (!bind && aff) query.aff = aff;
  return result(
    await apiEnvelope(bind ? '/api/oauth/telegram/bind' : '/api/oauth/telegram/login', {
      query,
      schema: finishSchema,
    }),
  );
}
