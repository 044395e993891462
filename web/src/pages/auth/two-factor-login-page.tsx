import { zodResolver } from '@hookform/resolvers/zod';
import { useMutation } from '@tanstack/react-query';
import type { ParseKeys } from 'i18next';
import { ShieldCheck } from 'lucide-react';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate } from 'react-router';
import { z } from 'zod/mini';

import { loginSecondStep } from '@/api/two-factor';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/components/ui/card';
import { Field } from '@/components/ui/field';
import { Input } from '@/components/ui/input';
import { Spinner } from '@/components/ui/spinner';
import { useSession } from '@/stores/session';
import { toast } from '@/stores/toasts';

import './auth.css';

/** Where a sign-in that needs a two-factor code continues. */
export const TWO_FACTOR_PATH = '/login/2fa';

const required: ParseKeys<'auth'> = 'twoFactor.required';

/** The second step's form: a current code from the app, or a recovery code. */
export const twoFactorCodeSchema = z.object({
  code: z.string().check(z.trim(), z.minLength(1, required)),
});

/**
 * /login/2fa: the second step of a sign-in (password or third-party) of an account with
 * two-factor on. The server holds the pending sign-in (5 minutes, single use); this page only
 * sends the code. On success it lands on /token like a password sign-in.
 */
export function TwoFactorLoginPage() {
  const { t } = useTranslation('auth');
  const navigate = useNavigate();
  const setUser = useSession((s) => s.setUser);
  const {
    register,
    handleSubmit,
    formState: { errors },
  } = useForm({
    resolver: zodResolver(twoFactorCodeSchema),
    defaultValues: { code: '' },
  });
  const finish = useMutation({
    mutationFn: ({ code }: { code: string }) => loginSecondStep(code),
    // The failure is shown in the form, with the way back to the password step.
    meta: { silent: true },
    onSuccess: (user) => {
      setUser(user);
      toast.success(t('login.success'));
      void navigate('/token');
    },
  });
  const error = errors.code?.message;

  return (
    <div className="auth">
      <Card className="auth__card">
        <CardHeader>
          <CardTitle>{t('twoFactor.title')}</CardTitle>
          <CardDescription>{t('twoFactor.subtitle')}</CardDescription>
        </CardHeader>
        <CardContent>
          <form
            className="auth__form"
            noValidate
            onSubmit={handleSubmit((values) => finish.mutate(values))}
          >
            <Field id="two-factor-code" label={t('twoFactor.label')} hint={t('twoFactor.hint')}>
              <Input
                id="two-factor-code"
                autoComplete="one-time-code"
                autoFocus
                placeholder={t('twoFactor.placeholder')}
                aria-invalid={error ? true : undefined}
                {...register('code')}
              />
            </Field>
            {error ? <Alert tone="danger">{t(error as ParseKeys<'auth'>)}</Alert> : null}
            {finish.isError ? <Alert tone="danger">{t('twoFactor.failed')}</Alert> : null}
            <Button type="submit" size="lg" disabled={finish.isPending}>
              {finish.isPending ? <Spinner /> : <ShieldCheck aria-hidden />}
              {t('twoFactor.submit')}
            </Button>
          </form>
          <div className="auth__links">
            <Link to="/login">{t('twoFactor.back')}</Link>
          </div>
        </CardContent>
      </Card>
    </div>
  );
}
