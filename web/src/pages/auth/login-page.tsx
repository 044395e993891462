import { zodResolver } from '@hookform/resolvers/zod';
import { useMutation } from '@tanstack/react-query';
import type { ParseKeys } from 'i18next';
import { LogIn } from 'lucide-react';
import { useState } from 'react';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate, useSearchParams } from 'react-router';

import { login } from '@/api/auth';
import type { Credentials } from '@/api/auth';
import { useStatus } from '@/api/status';
import { ROLE_ROOT } from '@/api/user';
import { Turnstile } from '@/components/common/turnstile';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/components/ui/card';
import { Field } from '@/components/ui/field';
import { Input } from '@/components/ui/input';
import { Spinner } from '@/components/ui/spinner';
import { usedDefaultRootPassword } from '@/lib/account-rules';
import { useDefaultPasswordWarning } from '@/stores/default-password';
import { useSession } from '@/stores/session';
import { toast } from '@/stores/toasts';

import { loginSchema } from './login-schema';
import { OAuthButtons } from './oauth-buttons';
import { TWO_FACTOR_PATH } from './two-factor-login-page';

import './auth.css';

/**
 * /login: password sign-in (lands on /token, or on /login/2fa for an account with two-factor
 * on), third-party buttons from the status, the bot check when on (spec 01 §2). Signing in as root with the default password raises the
 * default-password warning over the landing page.
 */
export function LoginPage() {
  const { t } = useTranslation('auth');
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const status = useStatus();
  const setUser = useSession((s) => s.setUser);
  const warnDefaultPassword = useDefaultPasswordWarning((s) => s.show);
  const [turnstileToken, setTurnstileToken] = useState('');
  const {
    register,
    handleSubmit,
    formState: { errors },
  } = useForm({
    resolver: zodResolver(loginSchema),
    defaultValues: { username: '', password: '' },
  });
  const signIn = useMutation({
    mutationFn: (credentials: Credentials) => login(credentials, turnstileToken),
    onSuccess: (result, credentials) => {
      if (result.kind === 'twoFactor') {
        void navigate(TWO_FACTOR_PATH);
        return;
      }
      const { user } = result;
      setUser(user);
      toast.success(t('login.success'));
      if (user.role >= ROLE_ROOT && usedDefaultRootPassword(user.username, credentials.password)) {
        warnDefaultPassword();
      }
      void navigate('/token');
    },
  });
  const formError = errors.username?.message ?? errors.password?.message;

  const submit = handleSubmit((values) => {
    if (status.turnstile_check && !turnstileToken) {
      toast.info(t('turnstile.pending'));
      return;
    }
    signIn.mutate(values);
  });

  return (
    <div className="auth">
      <Card className="auth__card">
        <CardHeader>
          <CardTitle>{t('login.title')}</CardTitle>
          <CardDescription>{t('login.subtitle')}</CardDescription>
        </CardHeader>
        <CardContent>
          {params.get('expired') === 'true' ? (
            <Alert tone="warning">{t('login.expired')}</Alert>
          ) : null}
          {status.password_login_enabled ? (
            <form className="auth__form" noValidate onSubmit={submit}>
              <Field id="login-username" label={t('login.field.username.label')}>
                <Input
                  id="login-username"
                  autoComplete="username"
                  placeholder={t('login.field.username.placeholder')}
                  aria-invalid={errors.username ? true : undefined}
                  {...register('username')}
                />
              </Field>
              <Field id="login-password" label={t('login.field.password.label')}>
                <Input
                  id="login-password"
                  type="password"
                  autoComplete="current-password"
                  placeholder={t('login.field.password.placeholder')}
                  aria-invalid={errors.password ? true : undefined}
                  {...register('password')}
                />
              </Field>
              {formError ? <Alert tone="danger">{t(formError as ParseKeys<'auth'>)}</Alert> : null}
              {status.turnstile_check ? (
                <Turnstile siteKey={status.turnstile_site_key} onToken={setTurnstileToken} />
              ) : null}
              <Button type="submit" size="lg" disabled={signIn.isPending}>
                {signIn.isPending ? <Spinner /> : <LogIn aria-hidden />}
                {signIn.isPending ? t('login.submitting') : t('login.submit')}
              </Button>
            </form>
          ) : (
            <Alert tone="info">{t('login.passwordLoginDisabled')}</Alert>
          )}
          <OAuthButtons status={status} />
          <div className="auth__links">
            {status.self_use_mode_enabled ? (
              <span />
            ) : (
              <Link to="/register">{t('login.link.register')}</Link>
            )}
            <Link to="/reset">{t('login.link.reset')}</Link>
          </div>
        </CardContent>
      </Card>
    </div>
  );
}
