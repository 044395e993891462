import { useStatus } from '@/api/status';

import { formatQuota } from './format';

/** Formats quota amounts the way the status asks (currency or compact units). */
export function useFormatQuota(): (quota: number) => string {
  const { quota_per_unit: quotaPerUnit, display_in_currency: displayInCurrency } = useStatus();
  return (quota) => formatQuota(quota, { quotaPerUnit, displayInCurrency });
}
