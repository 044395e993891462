import { zodResolver } from '@hookform/resolvers/zod';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { ParseKeys } from 'i18next';
import { useState } from 'react';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';

import { sendVerificationCode } from '@/api/auth';
import { startOAuth, telegramAuth, wechatAuth } from '@/api/oauth';
import type { RedirectProvider, TelegramFields } from '@/api/oauth';
import { bindEmail, selfQueryOptions } from '@/api/personal';
import { useStatus } from '@/api/status';
import type { Status } from '@/api/status';
import type { User } from '@/api/user';
import { TelegramLogin } from '@/components/common/telegram-login';
import { Turnstile } from '@/components/common/turnstile';
import { WeChatCodeDialog } from '@/components/common/wechat-code-dialog';
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
import { redirectTo } from '@/lib/redirect';
import { useCountdown } from '@/lib/use-countdown';
import { toast } from '@/stores/toasts';

import { bindEmailSchema } from './schema';
import type { BindEmailValues } from './schema';

/** Methods bound by sending the browser to the provider, with the status flag enabling each. */
const redirectMethods = {
  github: 'github_oauth',
  oidc: 'oidc_enabled',
  linuxdo: 'linuxdo_oauth',
} as const satisfies Record<RedirectProvider, keyof Status>;

/**
 * The account's bindings (spec 01 §6: bound only by the user, here). Email by a mailed code;
 * GitHub, OIDC and LinuxDO through the provider (the callback page comes back here); WeChat by
 * the official account's code; Telegram through its widget. Each method shows only when the
 * admin enabled it.
 */
export function BindingsCard({ user }: { user: User }) {
  const { t } = useTranslation('personal');
  const status = useStatus();
  const queryClient = useQueryClient();
  const [binding, setBinding] = useState(false);
  const [wechatOpen, setWechatOpen] = useState(false);
  const redirect = useMutation({
    mutationFn: (provider: RedirectProvider) => startOAuth(provider, ''),
    onSuccess: (url) => redirectTo(url),
  });
  const bound = (message: string) => () => {
    toast.success(message);
    void queryClient.invalidateQueries({ queryKey: selfQueryOptions.queryKey });
  };
  const wechat = useMutation({
    mutationFn: (code: string) => wechatAuth(code, true),
    onSuccess: () => {
      setWechatOpen(false);
      bound(t('bindings.wechatBound'))();
    },
  });
  const telegram = useMutation({
    mutationFn: (fields: TelegramFields) => telegramAuth(fields, true),
    onSuccess: bound(t('bindings.bound')),
  });
  const rows = [
    ['email', user.email],
    ['github', user.github_id],
    ['oidc', user.oidc_id],
    ['wechat', user.wechat_id],
    ['telegram', user.telegram_id],
    ['linuxdo', user.linux_do_id],
  ] as const;
  const action = (key: (typeof rows)[number][0], value: string) => {
    const label = value ? t('bindings.change') : t('bindings.bind');
    if (key === 'email') {
      return (
        <Button size="sm" variant="secondary" onClick={() => setBinding(true)}>
          {label}
        </Button>
      );
    }
    if (key === 'wechat') {
      return status.wechat_login ? (
        <Button size="sm" variant="secondary" onClick={() => setWechatOpen(true)}>
          {label}
        </Button>
      ) : null;
    }
    if (key === 'telegram') {
      return status.telegram_oauth ? (
        <TelegramLogin botName={status.telegram_bot_name} onAuth={telegram.mutate} />
      ) : null;
    }
    return status[redirectMethods[key]] ? (
      <Button
        size="sm"
        variant="secondary"
        disabled={redirect.isPending}
        aria-label={`${label} ${t(`bindings.method.${key}`)}`}
        onClick={() => redirect.mutate(key)}
      >
        {label}
      </Button>
    ) : null;
  };
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
              {action(key, value)}
            </li>
          ))}
        </ul>
      </CardContent>
      <BindEmailDialog open={binding} onOpenChange={setBinding} />
      <WeChatCodeDialog
        open={wechatOpen}
        onOpenChange={setWechatOpen}
        qrCode={status.wechat_qrcode}
        pending={wechat.isPending}
        onSubmit={wechat.mutate}
      />
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
