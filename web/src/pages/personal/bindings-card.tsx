import { zodResolver } from '@hookform/resolvers/zod';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { ParseKeys } from 'i18next';
import { useState } from 'react';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';

import { sendVerificationCode } from '@/api/auth';
import { bindEmail, selfQueryOptions } from '@/api/personal';
import { useStatus } from '@/api/status';
import type { User } from '@/api/user';
import { Turnstile } from '@/components/common/turnstile';
import { Button } from '@/components/ui/button';
import { Card, CardContent, CardHeader, CardTitle } from '@/components/ui/card';
import {
  Dialog,
  DialogContent,
  DialogDescription,
  DialogFooter,
  DialogHeader,
  DialogTitle,
} from '@/components/ui/dialog';
import { Field } from '@/components/ui/field';
import { Input } from '@/components/ui/input';
import { useCountdown } from '@/lib/use-countdown';
import { toast } from '@/stores/toasts';

import { bindEmailSchema } from './schema';
import type { BindEmailValues } from './schema';

/**
 * The account's bindings. Only email can be bound here: the server has no OAuth yet, so the
 * other methods are shown read-only.
 */
export function BindingsCard({ user }: { user: User }) {
  const { t } = useTranslation('personal');
  const [binding, setBinding] = useState(false);
  const rows = [
    ['email', user.email],
    ['github', user.github_id],
    ['oidc', user.oidc_id],
    ['wechat', user.wechat_id],
    ['telegram', user.telegram_id],
    ['linuxdo', user.linux_do_id],
  ] as const;
  return (
    <Card>
      <CardHeader>
        <CardTitle>{t('bindings.title')}</CardTitle>
      </CardHeader>
      <CardContent>
        <ul className="personal__list">
          {rows.map(([key, value]) => (
            <li key={key} className="personal__row">
              <div>
                <span>{t(`bindings.method.${key}`)}</span>
                <small>{value || t('bindings.none')}</small>
              </div>
              {key === 'email' ? (
                <Button size="sm" variant="secondary" onClick={() => setBinding(true)}>
                  {value ? t('bindings.change') : t('bindings.bind')}
                </Button>
              ) : null}
            </li>
          ))}
        </ul>
      </CardContent>
      <BindEmailDialog open={binding} onOpenChange={setBinding} />
    </Card>
  );
}

function BindEmailDialog({
  open,
  onOpenChange,
}: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
}) {
  const { t } = useTranslation('personal');
  const status = useStatus();
  const queryClient = useQueryClient();
  const countdown = useCountdown();
  const [turnstileToken, setTurnstileToken] = useState('');
  const {
    register,
    handleSubmit,
    trigger,
    getValues,
    reset,
    formState: { errors },
  } = useForm<BindEmailValues>({
    resolver: zodResolver(bindEmailSchema),
    defaultValues: { email: '', code: '' },
  });
  const sendCode = useMutation({
    mutationFn: (email: string) => sendVerificationCode(email, turnstileToken),
    onSuccess: () => {
      toast.success(t('bindEmail.codeSent'));
      countdown.start();
    },
  });
  const bind = useMutation({
    mutationFn: ({ email, code }: BindEmailValues) => bindEmail(email, code),
    onSuccess: () => {
      toast.success(t('bindEmail.success'));
      void queryClient.invalidateQueries({ queryKey: selfQueryOptions.queryKey });
      reset();
      onOpenChange(false);
    },
  });
  const message = (key: string | undefined) => (key ? t(key as ParseKeys<'personal'>) : undefined);
  const turnstilePending = () => {
    if (status.turnstile_check && !turnstileToken) {
      toast.info(t('turnstilePending'));
      return true;
    }
    return false;
  };

  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent>
        <DialogHeader>
          <DialogTitle>{t('bindEmail.title')}</DialogTitle>
          <DialogDescription>{t('bindEmail.description')}</DialogDescription>
        </DialogHeader>
        <form
          className="personal__form"
          noValidate
          onSubmit={handleSubmit((values) => bind.mutate(values))}
        >
          <Field
            id="bind-email"
            label={t('bindEmail.email')}
            error={message(errors.email?.message)}
          >
            <div className="personal__inline">
              <Input id="bind-email" type="email" autoComplete="email" {...register('email')} />
              <Button
                variant="secondary"
                disabled={countdown.active || sendCode.isPending}
                onClick={async () => {
                  if (!(await trigger('email')) || turnstilePending()) return;
                  sendCode.mutate(getValues('email').trim());
                }}
              >
                {countdown.active
                  ? t('bindEmail.resendIn', { seconds: countdown.remaining })
                  : t('bindEmail.sendCode')}
              </Button>
            </div>
          </Field>
          <Field id="bind-code" label={t('bindEmail.code')} error={message(errors.code?.message)}>
            <Input id="bind-code" autoComplete="one-time-code" {...register('code')} />
          </Field>
          {status.turnstile_check && open ? (
            <Turnstile siteKey={status.turnstile_site_key} onToken={setTurnstileToken} />
          ) : null}
          <DialogFooter>
            <Button type="submit" disabled={bind.isPending}>
              {t('bindEmail.submit')}
            </Button>
          </DialogFooter>
        </form>
      </DialogContent>
    </Dialog>
  );
}
