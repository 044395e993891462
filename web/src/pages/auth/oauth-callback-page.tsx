import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import { useNavigate, useSearchParams } from 'react-router';

import { finishOAuth } from '@/api/oauth';
import type { RedirectProvider } from '@/api/oauth';
import { selfQueryOptions } from '@/api/personal';
import { Card, CardContent } from '@/components/ui/card';
import { Spinner } from '@/components/ui/spinner';
import { useSession } from '@/stores/session';
import { toast } from '@/stores/toasts';

import { TWO_FACTOR_PATH } from './two-factor-login-page';

import './auth.css';

/** How long the failure note shows before leaving the page (spec 01 §2: 1.5 s). */
export const FAILURE_REDIRECT_MS = 1500;

/**
 * /oauth/github|oidc|linuxdo: the provider sends the browser back here with `code` and `state`.
 * The page hands them to the server once: a sign-in stores the user and lands on `/`, a binding
 * returns to `/personal`; an account with two-factor on continues at `/login/2fa`; a failure says so and leaves after 1.5 s for `/login` (for `/personal`
 * when the user was binding).
 */
export function OAuthCallbackPage({ provider }: { provider: RedirectProvider }) {
  const { t } = useTranslation('auth');
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const setUser = useSession((s) => s.setUser);
  const signedIn = useSession((s) => s.user !== null);
  // The state is single-use: StrictMode's second effect run must not send it again.
  const sent = useRef(false);

  const finish = useMutation({
    mutationFn: (p: { provider: RedirectProvider; code: string; state: string }) =>
      finishOAuth(p.provider, p.code, p.state),
    onSuccess: (result) => {
      if (result.twoFactor) {
        void navigate(TWO_FACTOR_PATH, { replace: true });
      } else if (result.bound) {
        toast.success(t('oauth.bound'));
        void queryClient.invalidateQueries({ queryKey: selfQueryOptions.queryKey });
        void navigate('/personal', { replace: true });
      } else {
        setUser(result.user);
        toast.success(t('login.success'));
        void navigate('/', { replace: true });
      }
    },
  });

  const code = params.get('code') ?? '';
  const state = params.get('state') ?? '';
  // No code: the provider refused (e.g. `error=access_denied`) or the address is incomplete.
  const incomplete = !code || !state;
  const failed = incomplete || finish.isError;
  const { mutate } = finish;

  useEffect(() => {
    if (sent.current || incomplete) return;
    sent.current = true;
    mutate({ provider, code, state });
  }, [code, incomplete, mutate, provider, state]);

  useEffect(() => {
    if (!failed) return;
    const timer = setTimeout(
      () => void navigate(signedIn ? '/personal' : '/login', { replace: true }),
      FAILURE_REDIRECT_MS,
    );
    return () => clearTimeout(timer);
  }, [failed, navigate, signedIn]);

  return (
    <div className="auth">
      <Card className="auth__card">
        <CardContent>
          {failed ? (
            <p role="alert">{signedIn ? t('oauth.failedBind') : t('oauth.failed')}</p>
          ) : (
            <Spinner label={t('oauth.pending')} />
          )}
        </CardContent>
      </Card>
    </div>
  );
}
