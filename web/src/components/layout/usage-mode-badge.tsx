import { useTranslation } from 'react-i18next';

import { useStatus } from '@/api/status';
import { Badge } from '@/components/ui/badge';

/** Self-use mode in purple, demo site in blue; the external (default) mode shows nothing. */
export function UsageModeBadge() {
  const { t } = useTranslation();
  const status = useStatus();
  if (status.self_use_mode_enabled) return <Badge tone="purple">{t('usageMode.self')}</Badge>;
  if (status.demo_site_enabled) return <Badge tone="blue">{t('usageMode.demo')}</Badge>;
  return null;
}
