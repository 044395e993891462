import { z } from 'zod/mini';

/**
 * The online top-up amount (spec 02 §5): an integer of at least 1 and at least min_topup
 * (充值数量不能小于 …). Returns the i18n key of the first failed rule, or null.
 */
export function amountProblem(amount: number, minTopUp: number): 'integer' | 'min' | null {
  if (!z.int().safeParse(amount).success) return 'integer';
  if (amount < Math.max(1, minTopUp)) return 'min';
  return null;
}

/** The smallest amount the form accepts. */
export const minimumAmount = (minTopUp: number): number => Math.max(1, Math.ceil(minTopUp));
