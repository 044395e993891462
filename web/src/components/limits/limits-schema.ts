import type { ParseKeys } from 'i18next';
import { z } from 'zod/mini';

import { LIMIT_FIELDS } from '@/api/limits';
import type { OwnerLimits } from '@/api/limits';

/** Error messages are i18n keys of the `limits` namespace. */
const message = (key: ParseKeys<'limits'>) => key;

/** The most per-key rows a channel may have (the server's MAX_KEY_LIMITS). */
export const MAX_KEY_ROWS = 1024;

/** One limit: a whole number, 0 = none (u32 on the server). */
const limit = z
  .int(message('rate.validation'))
  .check(z.gte(0, message('rate.validation')), z.lte(4_294_967_295, message('rate.validation')));

const limitsShape = {
  concurrency_limit: limit,
  rpm_limit: limit,
  tpm_limit: limit,
  rpd_limit: limit,
};

const setsALimit = (row: Record<(typeof LIMIT_FIELDS)[number], number>) =>
  LIMIT_FIELDS.some((f) => row[f] > 0);

/**
 * The rate-limit form of a key, a user or a channel; a channel's rows of per-key limits name
 * the key's line (1 = the first) among its `keyCount` keys, each line once, each row with a
 * limit (the server drops rows without one).
 */
export function limitsFormSchema(keyCount: number) {
  return z.object({ ...limitsShape, key_rows: keyRowsSchema(keyCount) });
}

/** A channel's per-key rows among its `keyCount` keys (see {@link limitsFormSchema}). */
export function keyRowsSchema(keyCount: number) {
  const keyRow = z
    .object({
      line: z
        .int(message('rate.key.validation.line'))
        .check(
          z.gte(1, message('rate.key.validation.line')),
          z.lte(Math.max(keyCount, 1), message('rate.key.validation.line')),
        ),
      ...limitsShape,
    })
    .check(
      z.refine(setsALimit, { message: message('rate.key.validation.noLimit'), path: ['line'] }),
    );
  return z.array(keyRow).check(
    z.maxLength(MAX_KEY_ROWS, message('rate.key.validation.tooMany')),
    z.refine((rows) => new Set(rows.map((r) => r.line)).size === rows.length, {
      message: message('rate.key.validation.twice'),
    }),
  );
}

/** The distinct messages of what is wrong with the rows (i18n keys), in the schema's order. */
export function keyRowsProblems(rows: unknown, keyCount: number): string[] {
  const result = keyRowsSchema(keyCount).safeParse(rows);
  return result.success ? [] : [...new Set(result.error.issues.map((i) => i.message))];
}
export type LimitsFormValues = z.infer<ReturnType<typeof limitsFormSchema>>;
export type KeyRow = LimitsFormValues['key_rows'][number];

/** The form for what is stored (key lines shown from 1). */
export function limitsValues(limits: OwnerLimits): LimitsFormValues {
  return {
    concurrency_limit: limits.concurrency_limit,
    rpm_limit: limits.rpm_limit,
    tpm_limit: limits.tpm_limit,
    rpd_limit: limits.rpd_limit,
    key_rows: limits.key_limits.map(({ index, ...rest }) => ({ line: index + 1, ...rest })),
  };
}

/** The PUT body of a valid form. */
export function toLimits(values: LimitsFormValues): OwnerLimits {
  const { key_rows, ...own } = values;
  return {
    ...own,
    key_limits: key_rows.map(({ line, ...rest }) => ({ index: line - 1, ...rest })),
  };
}

/** An empty key row for the first line not yet limited. */
export function newKeyRow(rows: KeyRow[]): KeyRow {
  let line = 1;
  while (rows.some((r) => r.line === line)) line += 1;
  return { line, concurrency_limit: 0, rpm_limit: 0, tpm_limit: 0, rpd_limit: 0 };
}
