import { describe, expect, it } from 'vitest';

import { dollarsToQuota, formatCompact, formatQuota } from './format';

describe('formatCompact', () => {
  it.each([
    [0, '0'],
    [9_999, '9999'],
    [10_000, '10.0k'],
    [123_456, '123.5k'],
    [1_000_000, '1.0M'],
    [2_500_000, '2.5M'],
    [1_000_000_000, '1.0B'],
    [-20_000, '-20.0k'],
  ])('%d → %s', (value, text) => {
    expect(formatCompact(value)).toBe(text);
  });
});

describe('formatQuota', () => {
  const currency = { quotaPerUnit: 500_000, displayInCurrency: true };
  it('shows currency as quota ÷ quota_per_unit with two decimals', () => {
    expect(formatQuota(500_000, currency)).toBe('$1.00');
    expect(formatQuota(100_000, currency)).toBe('$0.20');
    expect(formatQuota(0, currency)).toBe('$0.00');
    expect(formatQuota(-250_000, currency)).toBe('-$0.50');
  });

  it('shows compact units when not in currency', () => {
    expect(formatQuota(500_000, { quotaPerUnit: 500_000, displayInCurrency: false })).toBe(
      '500.0k',
    );
  });

  it('falls back to compact units when quota_per_unit is not positive', () => {
    expect(formatQuota(12_000, { quotaPerUnit: 0, displayInCurrency: true })).toBe('12.0k');
  });
});

describe('dollarsToQuota', () => {
  it('rounds to an integer quota', () => {
    expect(dollarsToQuota(0.2, 500_000)).toBe(100_000);
    expect(dollarsToQuota(1.0000001, 500_000)).toBe(500_000);
  });
});
