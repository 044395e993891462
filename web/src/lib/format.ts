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

/** The most decimals an amount is shown with (a quota of 1 at 500,000 per dollar needs 6). */
const MAX_DECIMALS = 12;

/**
 * An amount of money (or seconds) as text that never reads as zero when it is not: two decimals,
 * or two significant digits below 0.01 (`0.0042`), with a minus sign when negative. Amounts too
 * small even for twelve decimals show as `<0.000000000001`.
 */
export function formatAmount(amount: number): string {
  if (!Number.isFinite(amount)) return '—';
  const sign = amount < 0 ? '-' : '';
  const abs = Math.abs(amount);
  if (abs === 0 || abs >= 0.01) {
    // 0.005 ≤ x < 0.01 can round up to 0.01, but never to zero.
    return `${sign}${abs.toFixed(2)}`;
  }
  const decimals = 1 - Math.floor(Math.log10(abs));
  if (decimals > MAX_DECIMALS) return `${sign}<${(10 ** -MAX_DECIMALS).toFixed(MAX_DECIMALS)}`;
  return `${sign}${abs.toFixed(decimals)}`;
}

/** Dollars with the formatAmount rules: `$1.23`, `$0.0042`, `-$0.50`. */
export function formatDollars(amount: number): string {
  const text = formatAmount(amount);
  return text.startsWith('-') ? `-$${text.slice(1)}` : `$${text}`;
}

/** A quota amount: dollars when shown in currency (quota ÷ quota_per_unit), else compact units. */
export function formatQuota(quota: number, { quotaPerUnit, displayInCurrency }: QuotaDisplay) {
  if (displayInCurrency && quotaPerUnit > 0) return formatDollars(quota / quotaPerUnit);
  return formatCompact(quota);
}

/** Dollars as quota units (rounded to an integer). */
export const dollarsToQuota = (dollars: number, quotaPerUnit: number): number =>
  Math.round(dollars * quotaPerUnit);
