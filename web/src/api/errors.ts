import { i18n } from '@/i18n';
import { useSession } from '@/stores/session';
import { toast } from '@/stores/toasts';

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
  /** True once the generic handling took care of it (a 401 redirect): nothing more to show. */
  handled = false;

  constructor(kind: ApiErrorKind, message: string, status?: number, code?: string) {
    super(message);
    this.name = 'ApiError';
    this.kind = kind;
    this.status = status;
    this.code = code;
  }
}

/** The server's error codes the console has its own text for (`error.code.<code>`). */
export const errorCodes = [
  'invalid_request',
  'not_logged_in',
  'user_header_mismatch',
  'forbidden',
  'user_disabled',
  'bad_credentials',
  'password_login_disabled',
  'feature_disabled',
  'too_many_requests',
  'turnstile_failed',
  'code_invalid',
  'mail_failed',
  'two_factor_not_enabled',
  'two_factor_required',
  'two_factor_locked',
  'two_factor_wait',
  'reauth_required',
  'already_initialized',
  'redemption_invalid',
  'redemption_used',
  'not_found',
  'conflict',
  'internal_error',
] as const;
export type ErrorCode = (typeof errorCodes)[number];

const isErrorCode = (code: string | undefined): code is ErrorCode =>
  (errorCodes as readonly (string | undefined)[]).includes(code);

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
  if (isErrorCode(error.code)) {
    return { tone: 'error', text: t(`error.code.${error.code}`, { message: error.message }) };
  }
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
