import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';

import { useStatus } from '@/api/status';
import { ROLE_ROOT } from '@/api/user';
import { Alert } from '@/components/ui/alert';
import { useSession } from '@/stores/session';

/** An address without trailing slashes, lower-cased scheme and host (as URL compares them). */
function origin(address: string): string {
  try {
    return new URL(address.trim()).origin;
  } catch {
    return address.trim().replace(/\/+$/, '');
  }
}

/**
 * Tells root when the configured ServerAddress is not the address the console is used at:
 * chat links, OAuth callbacks and mail links are built from the configured one.
 */
export function ServerAddressWarning() {
  const { t } = useTranslation();
  const status = useStatus();
  const isRoot = useSession((s) => (s.user?.role ?? 0) >= ROLE_ROOT);
  const inUse = window.location.origin;
  // An empty address makes the console use its own origin (invite and chat links).
  const configured = status.server_address.trim();
  if (!isRoot || !status.setup || !configured || origin(configured) === inUse) return null;
  return (
    <Alert tone="warning" className="shell__notice" title={t('serverAddress.title')}>
      <p>
        {t('serverAddress.body', {
          configured,
          inUse,
        })}{' '}
        <Link to="/setting?tab=system">{t('serverAddress.fix')}</Link>
      </p>
    </Alert>
  );
}
