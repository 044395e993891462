import { describe, expect, it } from 'vitest';

import { dollarsToQuota, formatAmount, formatCompact, formatDollars, formatQuota } from './format';

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

describe('formatAmount (one rule for money everywhere)', () => {
  it.each([
    [0, '0.00'],
    [1, '1.00'],
    [0.01, '0.01'],
    [0.015, '0.01'],
    [1234.5678, '1234.57'],
    [0.0099, '0.0099'],
    [0.005, '0.0050'],
    [0.0042, '0.0042'],
    [0.000002, '0.0000020'],
    [0.00000123, '0.0000012'],
    [-0.5, '-0.50'],
    [-0.000002, '-0.0000020'],
    [1e-15, '<0.000000000001'],
  ])('%d → %s', (value, text) => {
    expect(formatAmount(value)).toBe(text);
  });

  it('never reads a non-zero amount as zero', () => {
    for (let exp = -11; exp <= 3; exp++) {
      for (const m of [1, 1.5, 4.9, 9.99]) {
        const value = m * 10 ** exp;
        expect(Number(formatAmount(value))).toBeGreaterThan(0);
        expect(Number(formatAmount(-value))).toBeLessThan(0);
      }
    }
  });

  it('shows nothing misleading for NaN or infinity', () => {
    expect(formatAmount(Number.NaN)).toBe('—');
    expect(formatAmount(Number.POSITIVE_INFINITY)).toBe('—');
  });

  it('puts the minus sign before the dollar sign', () => {
    expect(formatDollars(-0.0042)).toBe('-$0.0042');
    expect(formatDollars(3)).toBe('$3.00');
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

  it('shows a real cost below a cent with two significant digits, not $0.00', () => {
    expect(formatQuota(1, currency)).toBe('$0.0000020');
    expect(formatQuota(2_100, currency)).toBe('$0.0042');
    expect(formatQuota(-2_100, currency)).toBe('-$0.0042');
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
