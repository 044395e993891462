import { updateOption } from '@/api/options';
import type { Options } from '@/api/options';

/**
 * The price options the visual ratio editor edits (spec 02 §3 "Pricing row"): each is a JSON
 * object of model name → number, the admin's overrides on top of the server's built-in table.
 */
export const RATIO_KEYS = ['ModelRatio', 'CompletionRatio', 'CacheRatio', 'ModelPrice'] as const;
export type RatioKey = (typeof RATIO_KEYS)[number];

/** One model's prices; a row with a fixed price ignores the ratios. */
export interface RatioRow {
  name: string;
  /** Prompt-token ratio (US$ per 1M input tokens ÷ 2). */
  ratio?: number;
  /** Completion tokens cost this many prompt tokens. */
  completion?: number;
  /** Cached prompt tokens cost this many prompt tokens. */
  cache?: number;
  /** US$ per call. */
  price?: number;
}

const field: Record<RatioKey, 'ratio' | 'completion' | 'cache' | 'price'> = {
  ModelRatio: 'ratio',
  CompletionRatio: 'completion',
  CacheRatio: 'cache',
  ModelPrice: 'price',
};

/** An option's JSON object of numbers; anything else (bad JSON, non-numbers) is left out. */
function numberMap(text: string | undefined): Record<string, number> {
  if (!text?.trim()) return {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
    return Object.fromEntries(
      Object.entries(parsed).filter(
        (entry): entry is [string, number] =>
          typeof entry[1] === 'number' && Number.isFinite(entry[1]),
      ),
    );
  } catch {
    return {};
  }
}

/** The rows of the four price options, by model name. */
export function rowsFromOptions(options: Options): RatioRow[] {
  const rows = new Map<string, RatioRow>();
  for (const key of RATIO_KEYS) {
    for (const [name, value] of Object.entries(numberMap(options[key]))) {
      const row = rows.get(name) ?? { name };
      row[field[key]] = value;
      rows.set(name, row);
    }
  }
  return [...rows.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/** The four option texts of `rows` (pretty-printed JSON, models in name order). */
export function optionsFromRows(rows: RatioRow[]): Record<RatioKey, string> {
  const sorted = [...rows].sort((a, b) => a.name.localeCompare(b.name));
  const text = (key: RatioKey) => {
    const map: Record<string, number> = {};
    for (const row of sorted) {
      const value = row[field[key]];
      if (value !== undefined) map[row.name] = value;
    }
    return JSON.stringify(map, null, 2);
  };
  return {
    ModelRatio: text('ModelRatio'),
    CompletionRatio: text('CompletionRatio'),
    CacheRatio: text('CacheRatio'),
    ModelPrice: text('ModelPrice'),
  };
}

/** The options whose content `rows` change (compared as parsed maps, not as text). */
export function changedOptions(options: Options, rows: RatioRow[]): [RatioKey, string][] {
  const next = optionsFromRows(rows);
  const canonical = (map: Record<string, number>) =>
    JSON.stringify(Object.entries(map).sort(([a], [b]) => a.localeCompare(b)));
  return RATIO_KEYS.filter(
    (key) => canonical(numberMap(options[key])) !== canonical(numberMap(next[key])),
  ).map((key) => [key, next[key]]);
}

/** Saves each changed price option with PUT /api/option/; says how many failed. */
export async function savePriceOptions(changed: [RatioKey, string][]): Promise<number> {
  const results = await Promise.allSettled(changed.map(([key, value]) => updateOption(key, value)));
  return results.filter((r) => r.status === 'rejected').length;
}

/** `rows` with `updates` replacing (or adding) the rows of the same name. */
export function upsertRows(rows: RatioRow[], updates: RatioRow[]): RatioRow[] {
  const names = new Set(updates.map((r) => r.name));
  return [...rows.filter((r) => !names.has(r.name)), ...updates].sort((a, b) =>
    a.name.localeCompare(b.name),
  );
}

/**
 * How a price is entered (spec 02 §4 "Pricing editor modes"): per token by ratio, per token by
 * price (US$ per 1M tokens), or per call. Switching to per call clears the ratios; switching to
 * per token clears the price.
 */
export type PriceMode = 'ratio' | 'tokenPrice' | 'call';
export const PRICE_MODES: readonly PriceMode[] = ['ratio', 'tokenPrice', 'call'];

/** The editor's text fields. */
export interface PriceDraft {
  name: string;
  mode: PriceMode;
  ratio: string;
  completion: string;
  cache: string;
  /** US$ per 1M input tokens (mode tokenPrice). */
  inputPrice: string;
  /** US$ per 1M output tokens (mode tokenPrice). */
  outputPrice: string;
  /** US$ per call (mode call). */
  price: string;
}

/** Error ids, `ratio.error.<id>` in the settings texts. */
export type DraftError = 'required' | 'notNumber' | 'negative' | 'duplicate' | 'priceZero';
export type DraftErrors = Partial<Record<keyof PriceDraft, DraftError>>;

const text = (n: number | undefined) => (n === undefined ? '' : String(n));
/** Enough digits for a price derived from a ratio, without float noise (0.30000000000000004). */
const tidy = (n: number) => Number(n.toPrecision(12));

/** The draft of an existing row (or an empty one for `name`). */
export function draftFromRow(row: RatioRow): PriceDraft {
  return {
    name: row.name,
    mode: row.price !== undefined ? 'call' : 'ratio',
    ratio: text(row.ratio),
    completion: text(row.completion),
    cache: text(row.cache),
    inputPrice: row.ratio === undefined ? '' : String(tidy(row.ratio * 2)),
    outputPrice: row.ratio === undefined ? '' : String(tidy(row.ratio * 2 * (row.completion ?? 1))),
    price: text(row.price),
  };
}

/** Parses an optional non-negative number field into `errors`. */
function number(
  draft: PriceDraft,
  key: keyof PriceDraft,
  errors: DraftErrors,
  required: boolean,
): number | undefined {
  const value = draft[key].trim();
  if (value === '') {
    if (required) errors[key] = 'required';
    return undefined;
  }
  const n = Number(value);
  if (!Number.isFinite(n)) {
    errors[key] = 'notNumber';
    return undefined;
  }
  if (n < 0) {
    errors[key] = 'negative';
    return undefined;
  }
  return n;
}

/**
 * Checks a draft and converts it to a row. `taken` are the other rows' names (a new or renamed
 * row may not reuse one). Per token by price: ratio = input price ÷ 2, completion ratio =
 * output price ÷ input price (spec 02 §9).
 */
export function rowFromDraft(
  draft: PriceDraft,
  taken: ReadonlySet<string>,
): { row: RatioRow } | { errors: DraftErrors } {
  const errors: DraftErrors = {};
  const name = draft.name.trim();
  if (name === '') errors.name = 'required';
  else if (taken.has(name)) errors.name = 'duplicate';
  let row: RatioRow = { name };
  switch (draft.mode) {
    case 'call':
      row.price = number(draft, 'price', errors, true);
      break;
    case 'ratio':
      row = {
        name,
        ratio: number(draft, 'ratio', errors, true),
        completion: number(draft, 'completion', errors, false),
        cache: number(draft, 'cache', errors, false),
      };
      break;
    case 'tokenPrice': {
      const input = number(draft, 'inputPrice', errors, true);
      const output = number(draft, 'outputPrice', errors, false);
      if (output !== undefined && input === 0) errors.inputPrice = 'priceZero';
      row = {
        name,
        ratio: input === undefined ? undefined : tidy(input / 2),
        completion:
          output === undefined || input === undefined || input === 0
            ? undefined
            : tidy(output / input),
        cache: number(draft, 'cache', errors, false),
      };
      break;
    }
  }
  if (Object.keys(errors).length > 0) return { errors };
  // Undefined fields are left out, so a row never carries a stale value.
  return {
    row: Object.fromEntries(
      Object.entries(row).filter(([, v]) => v !== undefined),
    ) as unknown as RatioRow,
  };
}
