import type { ParseKeys } from 'i18next';
import { z } from 'zod/mini';

import { MAX_WINDOWS, PERIODS } from '@/api/budgets';
import type { Budgets, BudgetWindow, Period } from '@/api/budgets';
import { fromLocalInput, toLocalInput } from '@/lib/time';

/** Error messages are i18n keys of the `limits` namespace. */
const message = (key: ParseKeys<'limits'>) => key;

/** A window's kind as one choice: its period, calendar-aligned or rolling. */
export const WINDOW_KINDS = PERIODS.flatMap((p) => [p, `${p}-rolling`] as const);
export type WindowKind = (typeof WINDOW_KINDS)[number];

const kindOf = (w: BudgetWindow): WindowKind => (w.rolling ? `${w.period}-rolling` : w.period);
const windowOf = (kind: WindowKind, limit: number): BudgetWindow => ({
  period: kind.replace('-rolling', '') as Period,
  rolling: kind.endsWith('-rolling'),
  limit,
});

const windowRow = z.object({
  kind: z.enum(WINDOW_KINDS),
  limit: z
    .int(message('budget.validation.limit'))
    .check(z.gt(0, message('budget.validation.limit'))),
});
export type WindowRow = z.infer<typeof windowRow>;

/** At most MAX_WINDOWS rows, no kind twice (the server's rules, said before the round trip). */
const windowRows = z.array(windowRow).check(
  z.maxLength(MAX_WINDOWS, message('budget.validation.tooMany')),
  z.refine((rows) => new Set(rows.map((r) => r.kind)).size === rows.length, {
    message: message('budget.validation.duplicate'),
  }),
);

/** The budget section's form: the windows, and an override with its expiry. */
export const budgetFormSchema = z
  .object({
    windows: windowRows,
    override_on: z.boolean(),
    override_windows: windowRows,
    /** A `datetime-local` value. */
    override_until: z.string(),
  })
  .check(
    z.refine((v) => !v.override_on || fromLocalInput(v.override_until) > 0, {
      message: message('budget.validation.until'),
      path: ['override_until'],
    }),
  );
export type BudgetFormValues = z.infer<typeof budgetFormSchema>;

/** The form for what is set. */
export function budgetValues(budgets: Budgets): BudgetFormValues {
  const rows = (windows: BudgetWindow[]) =>
    windows.map((w) => ({ kind: kindOf(w), limit: w.limit }));
  return {
    windows: rows(budgets.windows),
    override_on: budgets.override !== null,
    override_windows: rows(budgets.override?.windows ?? []),
    override_until: toLocalInput(budgets.override?.until ?? 0),
  };
}

/** The PUT body of a valid form. */
export function toBudgets(values: BudgetFormValues): Budgets {
  const windows = (rows: WindowRow[]) => rows.map((r) => windowOf(r.kind, r.limit));
  return {
    windows: windows(values.windows),
    override: values.override_on
      ? { windows: windows(values.override_windows), until: fromLocalInput(values.override_until) }
      : null,
  };
}

/** The kind of a window in force (for its label). */
export const windowKind = kindOf;
