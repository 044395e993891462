import { z } from 'zod/mini';

import { useSession } from '@/stores/session';

import { ApiError, handleUnauthorized } from './errors';

/** The `New-Api-User` value sent by a guest. */
export const GUEST_USER_ID = '-1';

const envelopeSchema = z.object({
  success: z.boolean(),
  message: z.catch(z.string(), ''),
  data: z.optional(z.unknown()),
  /** The server's error code (`bad_credentials`, …), present on failures. */
  code: z.catch(z.optional(z.string()), undefined),
  /** The failure's specific code (`cannot_manage_peer`, …) when the server has one. */
  detail: z.catch(z.optional(z.string()), undefined),
  /** The arguments of the specific code's text. */
  args: z.catch(z.optional(z.array(z.string())), undefined),
});

/** The code, specific code and arguments of a failed envelope. */
const failure = (envelope: z.output<typeof envelopeSchema>) =>
  [envelope.code, { detail: envelope.detail, args: envelope.args }] as const;

type QueryValue = string | number | boolean | undefined;

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Sent as JSON. */
  body?: unknown;
  /** Appended to the URL; undefined values are left out. */
  query?: Record<string, QueryValue>;
  signal?: AbortSignal;
}

/**
 * Calls the console API and unwraps its `{success, message, data}` envelope.
 *
 * Every call carries `New-Api-User` (the stored user's id) and `Cache-Control: no-store`
 * (spec 01 §7). With a `schema` the `data` is validated and returned; without one the call only
 * has to succeed. Failures throw {@link ApiError}; a 401 also clears the session and redirects.
 */
export function apiRequest<S extends z.ZodMiniType>(
  path: string,
  options: RequestOptions & { schema: S },
): Promise<z.output<S>>;
export function apiRequest(path: string, options?: RequestOptions): Promise<void>;
export async function apiRequest(
  path: string,
  { schema, ...options }: RequestOptions & { schema?: z.ZodMiniType } = {},
): Promise<unknown> {
  const { envelope } = await send(path, options);
  if (!envelope.success) {
    throw new ApiError('app', envelope.message, undefined, ...failure(envelope));
  }
  if (!schema) return undefined;

  const data = schema.safeParse(envelope.data);
  if (!data.success) throw new ApiError('invalid', data.error.message);
  return data.data;
}

/**
 * Like {@link apiRequest}, for the few answers that carry fields beside `data` (GET /api/pricing's
 * `group_ratio`, POST /api/user/pay's `url`): `schema` validates the whole body. A
 * `success: false` answer is thrown as usual unless `acceptFailure` is set (POST
 * /api/user/amount puts its refusal in `data`); then it is returned for the caller to read.
 */
export async function apiEnvelope<S extends z.ZodMiniType>(
  path: string,
  {
    schema,
    acceptFailure = false,
    ...options
  }: RequestOptions & { schema: S; acceptFailure?: boolean },
): Promise<z.output<S>> {
  const { envelope, body } = await send(path, options);
  if (!envelope.success && !acceptFailure) {
    throw new ApiError('app', envelope.message, undefined, ...failure(envelope));
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new ApiError('invalid', parsed.error.message);
  return parsed.data;
}

/** Sends the call; HTTP and network failures throw, the parsed envelope and raw body return. */
async function send(
  path: string,
  { method = 'GET', body, query, signal }: RequestOptions,
): Promise<{ envelope: z.output<typeof envelopeSchema>; body: unknown }> {
  const headers: Record<string, string> = {
    'New-Api-User': String(useSession.getState().user?.id ?? GUEST_USER_ID),
    'Cache-Control': 'no-store',
  };
  if (body !== undefined) headers['Content-Type'] = 'application/json';

  let response: Response;
  try {
    response = await fetch(withQuery(path, query), {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
      signal,
    });
  } catch (cause) {
    if (signal?.aborted) throw cause;
    throw new ApiError('network', cause instanceof Error ? cause.message : String(cause));
  }

  const raw: unknown = await response.json().catch(() => undefined);
  const envelope = envelopeSchema.safeParse(raw);

  if (!response.ok) {
    const message = (envelope.success && envelope.data.message) || response.statusText;
    const error = envelope.success
      ? new ApiError('http', message, response.status, ...failure(envelope.data))
      : new ApiError('http', message, response.status);
    if (response.status === 401) handleUnauthorized(error);
    throw error;
  }
  if (!envelope.success) throw new ApiError('invalid', envelope.error.message);
  return { envelope: envelope.data, body: raw };
}

function withQuery(path: string, query: Record<string, QueryValue> | undefined): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined) params.set(key, String(value));
  }
  const search = params.toString();
  return search ? `${path}?${search}` : path;
}
