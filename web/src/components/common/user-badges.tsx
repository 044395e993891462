import { useTranslation } from 'react-i18next';

import { ROLE_ADMIN, ROLE_COMMON, ROLE_ROOT, STATUS_DISABLED, STATUS_ENABLED } from '@/api/user';
import { Badge } from '@/components/ui/badge';

/** The role badge of the user list (spec 01 §4): 1, 10, 100, else unknown identity. */
export function RoleBadge({ role }: { role: number }) {
  const { t } = useTranslation();
  switch (role) {
    case ROLE_COMMON:
      return <Badge>{t('user.role.common')}</Badge>;
    case ROLE_ADMIN:
      return <Badge tone="orange">{t('user.role.admin')}</Badge>;
    case ROLE_ROOT:
      return <Badge tone="red">{t('user.role.root')}</Badge>;
    default:
      return <Badge>{t('user.role.unknown')}</Badge>;
  }
}

/**
 * The status badge (spec 01 §4): 1 activated, 2 banned, a deregistered account is shown as
 * such; status 3 has no label of its own, so it and any other value show unknown status.
 */
export function StatusBadge({ status, deregistered }: { status: number; deregistered: boolean }) {
  const { t } = useTranslation();
  if (deregistered) return <Badge>{t('user.status.deregistered')}</Badge>;
  switch (status) {
    case STATUS_ENABLED:
      return <Badge tone="green">{t('user.status.enabled')}</Badge>;
    case STATUS_DISABLED:
      return <Badge tone="red">{t('user.status.disabled')}</Badge>;
    default:
      return <Badge tone="orange">{t('user.status.unknown')}</Badge>;
  }
}
