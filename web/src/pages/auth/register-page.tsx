import { zodResolver } from '@hookform/resolvers/zod';
import { useMutation } from '@tanstack/react-query';
import type { ParseKeys } from 'i18next';
import { UserPlus } from 'lucide-react';
import { useEffect, useState } from 'react';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate, useSearchParams } from 'react-router';

import { register as registerAccount, sendVerificationCode } from '@/api/auth';
import { useStatus } from '@/api/status';
import { Turnstile } from '@/components/common/turnstile';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/components/ui/card';
import { Field } from '@/components/ui/field';
import { Input } from '@/components/ui/input';
import { Spinner } from '@/components/ui/spinner';
import { useCountdown } from '@/lib/use-countdown';
import { toast } from '@/stores/toasts';

import { emailSchema, registerSchema } from './register-schema';
import type { RegisterValues } from './register-schema';

import './auth.css';

/** Local storage key of the inviter's code from `?aff=` (spec 01 §2, §3). */
export const AFF_STORAGE_KEY = 'aff';

export function storedAffCode(): string {
  try {
    return localStorage.getItem(AFF_STORAGE_KEY) ?? '';
  } catch {
    return '';
  }
}

/** /register: a new account (hidden and refused in self-use mode); success leads to /login. */
export function RegisterPage() {
  const { t } = useTranslation('auth');
  const status = useStatus();
  const [params] = useSearchParams();
  const aff = params.get('aff');
  useEffect(() => {
    if (!aff) return;
    try {
      localStorage.setItem(AFF_STORAGE_KEY, aff);
    } catch {
      // Storage disabled: the code is still sent from the query string below.
    }
  }, [aff]);

  const closed =
    status.self_use_mode_enabled || !status.register_enabled || !status.password_register_enabled;

  return (
    <div className="auth">
      <Card className="auth__card">
        <CardHeader>
          <CardTitle>{t('register.title')}</CardTitle>
          <CardDescription>{t('register.subtitle')}</CardDescription>
        </CardHeader>
        <CardContent>
          {closed ? (
            <Alert tone="info">
              {status.self_use_mode_enabled ? t('register.selfUse') : t('register.closed')}
            </Alert>
          ) : (
            <RegisterForm affCode={aff ?? storedAffCode()} />
          )}
          <div className="auth__links">
            <Link to="/login">{t('register.link.login')}</Link>
          </div>
        </CardContent>
      </Card>
    </div>
  );
}

function RegisterForm({ affCode }: { affCode: string }) {
  const { t } = useTranslation('auth');
  const navigate = useNavigate();
  const status = useStatus();
  const emailVerification = status.email_verification;
  const [turnstileToken, setTurnstileToken] = useState('');
  const countdown = useCountdown();
  const {
    register,
    handleSubmit,
    getValues,
    setError,
    formState: { errors },
  } = useForm<RegisterValues>({
    resolver: zodResolver(registerSchema(emailVerification)),
    mode: 'onTouched',
    defaultValues: { username: '', password: '', password2: '', email: '', verification_code: '' },
  });

  const needsTurnstile = () => {
    if (status.turnstile_check && !turnstileToken) {
      toast.info(t('turnstile.pending'));
      return true;
    }
    return false;
  };

  const sendCode = useMutation({
    mutationFn: (email: string) => sendVerificationCode(email, turnstileToken),
    onSuccess: () => {
      toast.success(t('register.codeSent'));
      countdown.start();
    },
  });
  const signUp = useMutation({
    mutationFn: (values: RegisterValues) =>
      registerAccount({ ...values, aff_code: affCode }, turnstileToken),
    onSuccess: () => {
      toast.success(t('register.success'));
      void navigate('/login');
    },
  });

  const requestCode = () => {
    const email = emailSchema.safeParse(getValues('email'));
    if (!email.success) {
      setError('email', { message: email.error.issues[0]?.message });
      return;
    }
    if (needsTurnstile()) return;
    sendCode.mutate(email.data);
  };

  const message = (key: string | undefined) => (key ? t(key as ParseKeys<'auth'>) : undefined);

  return (
    <form
      className="auth__form"
      noValidate
      onSubmit={handleSubmit((values) => {
        if (!needsTurnstile()) signUp.mutate(values);
      })}
    >
      <Field
        id="register-username"
        label={t('register.field.username.label')}
        error={message(errors.username?.message)}
      >
        <Input
          id="register-username"
          autoComplete="username"
          placeholder={t('register.field.username.placeholder')}
          aria-invalid={errors.username ? true : undefined}
          {...register('username')}
        />
      </Field>
      <Field
        id="register-password"
        label={t('register.field.password.label')}
        error={message(errors.password?.message)}
      >
        <Input
          id="register-password"
          type="password"
          autoComplete="new-password"
          placeholder={t('register.field.password.placeholder')}
          aria-invalid={errors.password ? true : undefined}
          {...register('password')}
        />
      </Field>
      <Field
        id="register-password2"
        label={t('register.field.password2.label')}
        error={message(errors.password2?.message)}
      >
        <Input
          id="register-password2"
          type="password"
          autoComplete="new-password"
          placeholder={t('register.field.password2.placeholder')}
          aria-invalid={errors.password2 ? true : undefined}
          {...register('password2')}
        />
      </Field>
      {emailVerification ? (
        <>
          <Field
            id="register-email"
            label={t('register.field.email.label')}
            error={message(errors.email?.message)}
          >
            <div className="auth__code-row">
              <Input
                id="register-email"
                type="email"
                autoComplete="email"
                placeholder={t('register.field.email.placeholder')}
                aria-invalid={errors.email ? true : undefined}
                {...register('email')}
              />
              <Button
                variant="secondary"
                disabled={countdown.active || sendCode.isPending}
                onClick={requestCode}
              >
                {countdown.active
                  ? t('register.resendIn', { seconds: countdown.remaining })
                  : t('register.sendCode')}
              </Button>
            </div>
          </Field>
          <Field
            id="register-code"
            label={t('register.field.code.label')}
            error={message(errors.verification_code?.message)}
          >
            <Input
              id="register-code"
              autoComplete="one-time-code"
              placeholder={t('register.field.code.placeholder')}
              aria-invalid={errors.verification_code ? true : undefined}
              {...register('verification_code')}
            />
          </Field>
        </>
      ) : null}
      {status.turnstile_check ? (
        <Turnstile siteKey={status.turnstile_site_key} onToken={setTurnstileToken} />
      ) : null}
      <Button type="submit" size="lg" disabled={signUp.isPending}>
        {signUp.isPending ? <Spinner /> : <UserPlus aria-hidden />}
        {t('register.submit')}
      </Button>
    </form>
  );
}
