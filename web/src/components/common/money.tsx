import { useFormatQuota } from '@/lib/use-format-quota';

import './money.css';

/**
 * A quota amount as the status asks (currency or compact units), in the error colour when it is
 * negative (a debt). `label` wraps the amount in its text (`已用：{{quota}}`).
 */
export function Money({ quota, label }: { quota: number; label?: (amount: string) => string }) {
  const formatQuota = useFormatQuota();
  const text = formatQuota(quota);
  return (
    <span className="money" data-negative={quota < 0 ? '' : undefined}>
      {label ? label(text) : text}
    </span>
  );
}
