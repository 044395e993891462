import { useMutation } from '@tanstack/react-query';
import { Copy, KeyRound } from 'lucide-react';
import { useTranslation } from 'react-i18next';
import { Link, useSearchParams } from 'react-router';

import { confirmReset } from '@/api/auth';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/components/ui/card';
import { Field } from '@/components/ui/field';
import { Input } from '@/components/ui/input';
import { copyText } from '@/stores/manual-copy';

import './auth.css';

/**
 * /user/reset?email=&token=: the link of the reset mail. Submitting issues a new password,
 * which is shown and copied to the clipboard (a refused copy opens the manual-copy dialog).
 */
export function ResetConfirmPage() {
  const { t } = useTranslation('auth');
  const [params] = useSearchParams();
  const email = params.get('email') ?? '';
  const token = params.get('token') ?? '';
  const reset = useMutation({
    mutationFn: () => confirmReset(email, token),
    onSuccess: (password) => void copyText(password, t('resetConfirm.copied')),
  });
  const password = reset.data;

  return (
    <div className="auth">
      <Card className="auth__card">
        <CardHeader>
          <CardTitle>{t('resetConfirm.title')}</CardTitle>
          <CardDescription>{t('resetConfirm.subtitle')}</CardDescription>
        </CardHeader>
        <CardContent>
          {!email || !token ? (
            <Alert tone="danger">{t('resetConfirm.invalidLink')}</Alert>
          ) : (
            <form
              className="auth__form"
              noValidate
              onSubmit={(event) => {
                event.preventDefault();
                reset.mutate();
              }}
            >
              <Field id="reset-confirm-email" label={t('reset.field.email.label')}>
                <Input id="reset-confirm-email" value={email} readOnly />
              </Field>
              {password ? (
                <Field id="reset-confirm-password" label={t('resetConfirm.newPassword')}>
                  <div className="auth__secret">
                    <code id="reset-confirm-password">{password}</code>
                    <Button
                      variant="secondary"
                      size="icon"
                      aria-label={t('resetConfirm.copy')}
                      onClick={() => void copyText(password, t('resetConfirm.copied'))}
                    >
                      <Copy aria-hidden />
                    </Button>
                  </div>
                </Field>
              ) : (
                <Button type="submit" size="lg" disabled={reset.isPending}>
                  <KeyRound aria-hidden />
                  {t('resetConfirm.submit')}
                </Button>
              )}
            </form>
          )}
          <div className="auth__links">
            <Link to="/login">{t('register.link.login')}</Link>
          </div>
        </CardContent>
      </Card>
    </div>
  );
}
