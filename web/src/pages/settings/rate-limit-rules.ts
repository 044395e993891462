/**
 * The option `RateLimitRules` (P15) as rows of a form: reading the stored JSON, the server's
 * checks said before the round trip (each problem names its rule, counted from 1), and the
 * JSON written back (empty names and zero limits left out).
 */

/** The most rules the option may hold (the server's MAX_RULES). */
export const MAX_RULES = 1000;
/** The most requests one rule's queue may hold. */
export const MAX_QUEUE = 10_000;
/** The longest a queued request may wait, in milliseconds. */
export const MAX_QUEUE_WAIT_MS = 600_000;
/** The largest limit the server stores (u32). */
const MAX_LIMIT = 4_294_967_295;

/** The numbers of a rule, in the order the editor shows them. */
export const RULE_NUMBERS = [
  'concurrency_limit',
  'rpm_limit',
  'tpm_limit',
  'rpd_limit',
  'queue',
  'queue_timeout_ms',
] as const;
export type RuleNumber = (typeof RULE_NUMBERS)[number];

/** One rule as the editor holds it ('' = every group or every model; NaN = not a number). */
export type RuleRow = { group: string; model: string } & Record<RuleNumber, number>;

/** An empty rule. */
export const emptyRule = (): RuleRow => ({
  group: '',
  model: '',
  concurrency_limit: 0,
  rpm_limit: 0,
  tpm_limit: 0,
  rpd_limit: 0,
  queue: 0,
  queue_timeout_ms: 0,
});

/** The stored text as rows, or null when it is not a list of rule objects. */
export function parseRules(text: string): RuleRow[] | null {
  let value: unknown;
  try {
    value = JSON.parse(text.trim() === '' ? '[]' : text);
  } catch {
    return null;
  }
  if (!Array.isArray(value)) return null;
  const rows: RuleRow[] = [];
  for (const item of value) {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) return null;
    const rule = item as Record<string, unknown>;
    const row = emptyRule();
    for (const name of ['group', 'model'] as const) {
      const v = rule[name];
      if (v !== undefined && v !== null && typeof v !== 'string') return null;
      row[name] = v ?? '';
    }
    for (const name of RULE_NUMBERS) {
      const v = rule[name];
      if (v !== undefined && typeof v !== 'number') return null;
      row[name] = v ?? 0;
    }
    rows.push(row);
  }
  return rows;
}

/** What is wrong with a rule: an i18n key of `limits:rules.problem` with its values. */
export type RuleProblem =
  | { rule: number; kind: 'number' | 'target' | 'noLimit' | 'queue' }
  | { rule: number; kind: 'duplicate'; other: number }
  | { rule: 0; kind: 'tooMany' };

const whole = (n: number) => Number.isInteger(n) && n >= 0 && n <= MAX_LIMIT;

/** Every problem of the rows, in rule order (the server refuses the list on the first). */
export function ruleProblems(rows: RuleRow[]): RuleProblem[] {
  const problems: RuleProblem[] = [];
  if (rows.length > MAX_RULES) problems.push({ rule: 0, kind: 'tooMany' });
  const seen = new Map<string, number>();
  rows.forEach((row, i) => {
    const rule = i + 1;
    const group = row.group.trim();
    const model = row.model.trim();
    if (!RULE_NUMBERS.every((n) => whole(row[n]))) {
      problems.push({ rule, kind: 'number' });
      return;
    }
    if (group === '' && model === '') problems.push({ rule, kind: 'target' });
    if (row.concurrency_limit + row.rpm_limit + row.tpm_limit + row.rpd_limit === 0) {
      problems.push({ rule, kind: 'noLimit' });
    }
    const noQueue = row.queue === 0 && row.queue_timeout_ms === 0;
    const queue =
      row.queue >= 1 &&
      row.queue <= MAX_QUEUE &&
      row.queue_timeout_ms >= 1 &&
      row.queue_timeout_ms <= MAX_QUEUE_WAIT_MS;
    if (!noQueue && !queue) problems.push({ rule, kind: 'queue' });
    const target = JSON.stringify([group, model]);
    const first = seen.get(target);
    if (first !== undefined) problems.push({ rule, kind: 'duplicate', other: first });
    else seen.set(target, rule);
  });
  return problems;
}

/** The option's text for valid rows: names trimmed, empty names and zero numbers left out. */
export function rulesText(rows: RuleRow[]): string {
  const rules = rows.map((row) => {
    const rule: Record<string, string | number> = {};
    if (row.group.trim() !== '') rule.group = row.group.trim();
    if (row.model.trim() !== '') rule.model = row.model.trim();
    for (const name of RULE_NUMBERS) if (row[name] !== 0) rule[name] = row[name];
    return rule;
  });
  return JSON.stringify(rules);
}
