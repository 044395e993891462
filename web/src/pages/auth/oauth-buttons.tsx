import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';

import { startOAuth, telegramAuth, wechatAuth } from '@/api/oauth';
import type { OAuthResult, RedirectProvider, TelegramFields } from '@/api/oauth';
import type { Status } from '@/api/status';
import { TelegramLogin } from '@/components/common/telegram-login';
import { WeChatCodeDialog } from '@/components/common/wechat-code-dialog';
import { Button } from '@/components/ui/button';
import { redirectTo } from '@/lib/redirect';
import { useSession } from '@/stores/session';
import { toast } from '@/stores/toasts';

import { storedAffCode } from './register-page';
import { TWO_FACTOR_PATH } from './two-factor-login-page';

const redirectProviders = [
  { key: 'github', flag: 'github_oauth' },
  { key: 'oidc', flag: 'oidc_enabled' },
  { key: 'linuxdo', flag: 'linuxdo_oauth' },
] as const satisfies readonly { key: RedirectProvider; flag: keyof Status }[];

/**
 * Third-party sign-in, one button per method the status enables (spec 01 §2). GitHub, OIDC and
 * LinuxDO send the browser to the provider (the callback pages finish); WeChat asks for the
 * official account's code; Telegram shows its widget. A sign-in lands on `/`.
 */
export function OAuthButtons({ status }: { status: Status }) {
  const { t } = useTranslation('auth');
  const navigate = useNavigate();
  const setUser = useSession((s) => s.setUser);
  const [wechatOpen, setWechatOpen] = useState(false);
  const signedIn = (result: OAuthResult) => {
    if (result.twoFactor) {
      void navigate(TWO_FACTOR_PATH);
      return;
    }
    setUser(result.user);
    toast.success(t('login.success'));
    void navigate('/');
  };
  const redirect = useMutation({
    mutationFn: (provider: RedirectProvider) => startOAuth(provider, storedAffCode()),
    onSuccess: (url) => redirectTo(url),
  });
  const wechat = useMutation({
    mutationFn: (code: string) => wechatAuth(code, false, storedAffCode()),
    onSuccess: signedIn,
  });
  const telegram = useMutation({
    mutationFn: (fields: TelegramFields) => telegramAuth(fields, false, storedAffCode()),
    onSuccess: signedIn,
  });
  const enabled = redirectProviders.filter((p) => status[p.flag]);
  if (enabled.length === 0 && !status.wechat_login && !status.telegram_oauth) return null;
  return (
    <div className="auth__oauth">
      <p className="auth__divider">{t('login.oauth.title')}</p>
      <div className="auth__oauth-buttons">
        {enabled.map((p) => (
          <Button
            key={p.key}
            variant="secondary"
            disabled={redirect.isPending}
            onClick={() => redirect.mutate(p.key)}
          >
            {t(`login.oauth.provider.${p.key}`)}
          </Button>
        ))}
        {status.wechat_login ? (
          <Button variant="secondary" onClick={() => setWechatOpen(true)}>
            {t('login.oauth.provider.wechat')}
          </Button>
        ) : null}
      </div>
      {status.telegram_oauth ? (
        <TelegramLogin botName={status.telegram_bot_name} onAuth={telegram.mutate} />
      ) : null}
      <WeChatCodeDialog
        open={wechatOpen}
        onOpenChange={setWechatOpen}
        qrCode={status.wechat_qrcode}
        pending={wechat.isPending}
        onSubmit={wechat.mutate}
      />
    </div>
  );
}
