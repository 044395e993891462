/** How quota amounts are shown: from the status's `quota_per_unit` and `display_in_currency`. */
export interface QuotaDisplay {
  quotaPerUnit: number;
  displayInCurrency: boolean;
}

/**
 * A number in compact units (spec 01 §9): k from 10,000, M from 1,000,000, B from
 * 1,000,000,000, one decimal; smaller numbers as they are.
 */
export function formatCompact(value: number): string {
  const abs = Math.abs(value);
  const sign = value < 0 ? '-' : '';
  if (abs >= 1_000_000_000) return `${sign}${(abs / 1_000_000_000).toFixed(1)}B`;
  if (abs >= 1_000_000) return `${sign}${(abs / 1_000_000).toFixed(1)}M`;
  if (abs >= 10_000) return `${sign}${(abs / 1_000).toFixed(1)}k`;
  return String(value);
}

/** A quota amount: `$1.23` when shown in currency (quota ÷ quota_per_unit), else compact units. */
export function formatQuota(quota: number, { quotaPerUnit, displayInCurrency }: QuotaDisplay) {
  if (displayInCurrency && quotaPerUnit > 0) {
    const amount = quota / quotaPerUnit;
    return `${amount < 0 ? '-' : ''}$${Math.abs(amount).toFixed(2)}`;
  }
  return formatCompact(quota);
}

/** Dollars as quota units (rounded to an integer). */
export const dollarsToQuota = (dollars: number, quotaPerUnit: number): number =>
  Math.round(dollars * quotaPerUnit);
