import { rowTokens } from '@/api/dashboard';
import type { Granularity, QuotaData } from '@/api/dashboard';

const HOUR = 3_600;
const DAY = 86_400;
/** More buckets than this are not filled with zeros (a long range by the hour). */
const MAX_FILLED_BUCKETS = 2_000;
/** Models charted on their own; the rest are folded into one "other" series. */
export const CHARTED_MODELS = 6;
/** The series key of the folded models. */
export const OTHER_SERIES = '__other__';

/** The start of the local hour, day or week (Monday) holding `seconds`, in unix seconds. */
export function bucketStart(seconds: number, granularity: Granularity): number {
  const d = new Date(seconds * 1000);
  d.setMinutes(0, 0, 0);
  if (granularity !== 'hour') d.setHours(0);
  if (granularity === 'week') d.setDate(d.getDate() - ((d.getDay() + 6) % 7));
  return Math.floor(d.getTime() / 1000);
}

function nextBucket(start: number, granularity: Granularity): number {
  if (granularity === 'hour') return start + HOUR;
  const d = new Date(start * 1000);
  d.setDate(d.getDate() + (granularity === 'day' ? 1 : 7));
  return Math.floor(d.getTime() / 1000);
}

export interface Totals {
  quota: number;
  count: number;
  tokens: number;
}

export interface Bucket extends Totals {
  /** Bucket start, unix seconds. */
  time: number;
  /** Quota per charted model (and {@link OTHER_SERIES}). */
  byModel: Record<string, number>;
}

export interface ModelTotal extends Totals {
  model: string;
}

export interface Dashboard {
  totals: Totals;
  /** Every bucket of the window in order, empty ones included (up to a limit). */
  buckets: Bucket[];
  /** Per model, most quota first. */
  models: ModelTotal[];
  /** The series of the charts: the top models, then {@link OTHER_SERIES} when models were folded. */
  series: string[];
}

/** The longest window a user may ask for (the server refuses more): 30 days. */
export const MAX_SELF_SPAN = 30 * DAY;

/** Folds hourly rows into buckets of `granularity` over `[start, end]` and totals per model. */
export function aggregate(
  rows: QuotaData[],
  granularity: Granularity,
  start: number,
  end: number,
): Dashboard {
  const totals: Totals = { quota: 0, count: 0, tokens: 0 };
  const perModel = new Map<string, ModelTotal>();
  for (const row of rows) {
    const tokens = rowTokens(row);
    totals.quota += row.quota;
    totals.count += row.count;
    totals.tokens += tokens;
    const model = perModel.get(row.model_name) ?? {
      model: row.model_name,
      quota: 0,
      count: 0,
      tokens: 0,
    };
    model.quota += row.quota;
    model.count += row.count;
    model.tokens += tokens;
    perModel.set(row.model_name, model);
  }
  const models = [...perModel.values()].sort(
    (a, b) => b.quota - a.quota || b.count - a.count || a.model.localeCompare(b.model),
  );
  const charted = models.slice(0, CHARTED_MODELS).map((m) => m.model);
  const series = models.length > CHARTED_MODELS ? [...charted, OTHER_SERIES] : charted;
  const seriesOf = (model: string) => (charted.includes(model) ? model : OTHER_SERIES);

  const buckets = new Map<number, Bucket>();
  const bucket = (time: number): Bucket => {
    let b = buckets.get(time);
    if (!b) {
      b = { time, quota: 0, count: 0, tokens: 0, byModel: {} };
      buckets.set(time, b);
    }
    return b;
  };
  if (start > 0 && end >= start) {
    let time = bucketStart(start, granularity);
    for (let i = 0; time <= end && i < MAX_FILLED_BUCKETS; i += 1) {
      bucket(time);
      time = nextBucket(time, granularity);
    }
  }
  for (const row of rows) {
    const b = bucket(bucketStart(row.created_at, granularity));
    b.quota += row.quota;
    b.count += row.count;
    b.tokens += rowTokens(row);
    const key = seriesOf(row.model_name);
    b.byModel[key] = (b.byModel[key] ?? 0) + row.quota;
  }
  return {
    totals,
    buckets: [...buckets.values()].sort((a, b) => a.time - b.time),
    models,
    series,
  };
}

/** Requests (or tokens) per minute over the window, one decimal. */
export function perMinute(amount: number, start: number, end: number): number {
  const minutes = (end - start) / 60;
  return minutes > 0 ? Math.round((amount / minutes) * 10) / 10 : 0;
}

/** The default window of a granularity: the last day, week or four weeks, to an hour ahead. */
export function defaultDashboardWindow(
  granularity: Granularity,
  now: number = Date.now(),
): { start: number; end: number } {
  const seconds = Math.floor(now / 1000);
  const back = granularity === 'hour' ? DAY : granularity === 'day' ? 7 * DAY : 28 * DAY;
  return { start: seconds - back, end: seconds + HOUR };
}

/** A bucket's axis label: `MM-DD HH:00` by the hour, `MM-DD` by the day or week. */
export function bucketLabel(time: number, granularity: Granularity): string {
  const d = new Date(time * 1000);
  const pad = (n: number) => String(n).padStart(2, '0');
  const day = `${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
  return granularity === 'hour' ? `${day} ${pad(d.getHours())}:00` : day;
}

export interface UserTotal extends Totals {
  username: string;
}

/** Totals per user (the rows of GET /api/data/users), most quota first. */
export function byUser(rows: QuotaData[]): UserTotal[] {
  const users = new Map<string, UserTotal>();
  for (const row of rows) {
    const key = row.username || String(row.user_id);
    const user = users.get(key) ?? { username: key, quota: 0, count: 0, tokens: 0 };
    user.quota += row.quota;
    user.count += row.count;
    user.tokens += rowTokens(row);
    users.set(key, user);
  }
  return [...users.values()].sort(
    (a, b) => b.quota - a.quota || b.count - a.count || a.username.localeCompare(b.username),
  );
}
