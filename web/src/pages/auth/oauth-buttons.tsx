import { useTranslation } from 'react-i18next';

import type { Status } from '@/api/status';
import { Button } from '@/components/ui/button';
import { toast } from '@/stores/toasts';

const providers = [
  { key: 'github', flag: 'github_oauth' },
  { key: 'oidc', flag: 'oidc_enabled' },
  { key: 'linuxdo', flag: 'linuxdo_oauth' },
  { key: 'wechat', flag: 'wechat_login' },
  { key: 'telegram', flag: 'telegram_oauth' },
] as const satisfies readonly { key: string; flag: keyof Status }[];

/**
 * Third-party sign-in buttons, one per login method the status enables. The server has no
 * OAuth yet, so a click only says so.
 */
export function OAuthButtons({ status }: { status: Status }) {
  const { t } = useTranslation('auth');
  const enabled = providers.filter((p) => status[p.flag]);
  if (enabled.length === 0) return null;
  return (
    <div className="auth__oauth">
      <p className="auth__divider">{t('login.oauth.title')}</p>
      <div className="auth__oauth-buttons">
        {enabled.map((p) => (
          <Button
            key={p.key}
            variant="secondary"
            onClick={() => toast.info(t('login.oauth.unavailable'))}
          >
            {t(`login.oauth.provider.${p.key}`)}
          </Button>
        ))}
      </div>
    </div>
  );
}
