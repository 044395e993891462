import { i18n } from '@/i18n';
import { useSession } from '@/stores/session';
import { toast } from '@/stores/toasts';

import serverErrorCodes from './error-codes.json';

/**
 * Where a failed call failed: the HTTP status (`http`), the connection (`network`), the
 * application (`app`: `success: false`, the message is the server's), or the answer's shape
 * (`invalid`).
 */
export type ApiErrorKind = 'http' | 'network' | 'app' | 'invalid';

/** The one error type thrown by the API client. */
export class ApiError extends Error {
  readonly kind: ApiErrorKind;
  /** HTTP status for `http` errors. */
  readonly status: number | undefined;
  /** The server's error code (`bad_credentials`, `user_disabled`, …) when it sent one. */
  readonly code: string | undefined;
  /** The failure's specific code (`cannot_manage_peer`, …) when the server sent one. */
  readonly detail: string | undefined;
  /** The arguments of the specific code's text, in order. */
  readonly args: readonly string[];
  /** True once the generic handling took care of it (a 401 redirect): nothing more to show. */
  handled = false;

  constructor(
    kind: ApiErrorKind,
    message: string,
    status?: number,
    code?: string,
    specific: { detail?: string | undefined; args?: readonly string[] | undefined } = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.kind = kind;
    this.status = status;
    this.code = code;
    this.detail = specific.detail;
    this.args = specific.args ?? [];
  }
}

/**
 * Every error code the server defines (`error-codes.json`, written by the server's own test):
 * the console has a zh and an en text for each (`error.code.<code>`), checked by the i18n test.
 */
export const errorCodes: readonly string[] = serverErrorCodes;

const isErrorCode = (code: string | undefined): code is string =>
  code !== undefined && errorCodes.includes(code);

/**
 * What went wrong, for a toast that says which action failed: the server's specific text in the
 * reader's language when it sent a specific code, else its message as sent.
 */
export function localizedMessage(error: unknown): string {
  if (!(error instanceof ApiError)) return error instanceof Error ? error.message : String(error);
  if (!isErrorCode(error.detail)) return error.message;
  const args = Object.fromEntries(error.args.map((arg, i) => [`arg${i}`, arg]));
  return i18n.t(`error.code.${error.detail}` as 'error.code.internal_error', {
    ...args,
    message: error.message,
  });
}

/** The text of a server error in the reader's language: its specific code's, else its code's. */
function codeText(error: ApiError): string | undefined {
  const t = i18n.t;
  if (isErrorCode(error.detail)) return localizedMessage(error);
  if (isErrorCode(error.code)) {
    return t(`error.code.${error.code}` as 'error.code.internal_error', {
      message: error.message,
    });
  }
  return undefined;
}

export interface ErrorNotice {
  tone: 'error' | 'info';
  text: string;
}

/**
 * The generic error handling of spec 01 §8: what a failed call tells the user. A known server
 * error code wins (its text may quote the server's detail); else the HTTP status decides.
 */
export function describeApiError(error: unknown): ErrorNotice {
  const t = i18n.t;
  if (!(error instanceof ApiError)) {
    const message = error instanceof Error ? error.message : String(error);
    return { tone: 'error', text: t('error.generic', { message }) };
  }
  const text = codeText(error);
  if (text !== undefined) return { tone: 'error', text };
  switch (error.kind) {
    case 'app':
      return { tone: 'error', text: error.message || t('error.unknown') };
    case 'network':
      return { tone: 'error', text: t('error.network') };
    case 'invalid':
      return { tone: 'error', text: t('error.invalidResponse') };
    case 'http':
      switch (error.status) {
        case 429:
          return { tone: 'error', text: t('error.http.tooManyRequests') };
        case 500:
          return { tone: 'error', text: t('error.http.serverError') };
        case 405:
          return { tone: 'info', text: t('error.http.demoSite') };
        default:
          return { tone: 'error', text: t('error.generic', { message: error.message }) };
      }
  }
}

/** Shows a failed call as a toast (unless it was already handled by a redirect). */
export function notifyApiError(error: unknown): void {
  if (error instanceof ApiError && error.handled) return;
  const { tone, text } = describeApiError(error);
  toast[tone](text);
}

/**
 * A 401 means the session is gone: forget the stored user and go to `/login?expired=true`
 * (spec 01 §4, §8). On the login page itself the error is left to the form.
 */
export function handleUnauthorized(error: ApiError): void {
  useSession.getState().clearUser();
  if (window.location.pathname === '/login') return;
  error.handled = true;
  window.location.assign('/login?expired=true');
}
