import { zodResolver } from '@hookform/resolvers/zod';
import { useMutation } from '@tanstack/react-query';
import type { ParseKeys } from 'i18next';
import { Mail } from 'lucide-react';
import { useState } from 'react';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';

import { sendResetMail } from '@/api/auth';
import { useStatus } from '@/api/status';
import { Turnstile } from '@/components/common/turnstile';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/components/ui/card';
import { Field } from '@/components/ui/field';
import { Input } from '@/components/ui/input';
import { useCountdown } from '@/lib/use-countdown';
import { toast } from '@/stores/toasts';

import { resetRequestSchema } from './register-schema';

import './auth.css';

/**
 * /reset: asks for a reset mail. The server answers success for any address, so the page says
 * the same whatever was typed; the button then waits out a 30-second countdown.
 */
export function ResetPage() {
  const { t } = useTranslation('auth');
  const status = useStatus();
  const countdown = useCountdown();
  const [turnstileToken, setTurnstileToken] = useState('');
  const [sent, setSent] = useState(false);
  const {
    register,
    handleSubmit,
    formState: { errors },
  } = useForm({ resolver: zodResolver(resetRequestSchema), defaultValues: { email: '' } });
  const request = useMutation({
    mutationFn: (email: string) => sendResetMail(email, turnstileToken),
    onSuccess: () => {
      setSent(true);
      toast.success(t('reset.sent'));
      countdown.start();
    },
  });

  return (
    <div className="auth">
      <Card className="auth__card">
        <CardHeader>
          <CardTitle>{t('reset.title')}</CardTitle>
          <CardDescription>{t('reset.subtitle')}</CardDescription>
        </CardHeader>
        <CardContent>
          <form
            className="auth__form"
            noValidate
            onSubmit={handleSubmit(({ email }) => {
              if (status.turnstile_check && !turnstileToken) {
                toast.info(t('turnstile.pending'));
                return;
              }
              request.mutate(email);
            })}
          >
            <Field
              id="reset-email"
              label={t('reset.field.email.label')}
              error={
                errors.email?.message ? t(errors.email.message as ParseKeys<'auth'>) : undefined
              }
            >
              <Input
                id="reset-email"
                type="email"
                autoComplete="email"
                placeholder={t('reset.field.email.placeholder')}
                aria-invalid={errors.email ? true : undefined}
                {...register('email')}
              />
            </Field>
            {sent ? <Alert tone="success">{t('reset.sentHint')}</Alert> : null}
            {status.turnstile_check ? (
              <Turnstile siteKey={status.turnstile_site_key} onToken={setTurnstileToken} />
            ) : null}
            <Button type="submit" size="lg" disabled={countdown.active || request.isPending}>
              <Mail aria-hidden />
              {countdown.active
                ? t('reset.retryIn', { seconds: countdown.remaining })
                : t('reset.submit')}
            </Button>
          </form>
          <div className="auth__links">
            <Link to="/login">{t('register.link.login')}</Link>
          </div>
        </CardContent>
      </Card>
    </div>
  );
}
