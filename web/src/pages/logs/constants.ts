import type { ColumnSpec, Visibility as ColumnVisibility } from '@/stores/columns';

/** The log table's optional columns, in display order; the expand toggle always shows. */
export const logColumns = [
  'time',
  'channel',
  'username',
  'token',
  'group',
  'type',
  'model',
  'useTime',
  'prompt',
  'completion',
  'cost',
  'retry',
  'content',
] as const;
export type LogColumn = (typeof logColumns)[number];

/** Columns only admins have data for (spec 02 §6); hidden by default for everyone else. */
export const adminColumns: readonly LogColumn[] = ['channel', 'username', 'retry'];

export type Visibility = ColumnVisibility<LogColumn>;

/** Every column visible, except the admin columns for a non-admin (spec 02 §9). */
export function defaultVisibility(admin: boolean): Visibility {
  return Object.fromEntries(
    logColumns.map((c) => [c, admin || !adminColumns.includes(c)]),
  ) as Visibility;
}

/** The log table's column settings: a non-admin never sees the admin columns. */
export function logColumnSpec(admin: boolean): ColumnSpec<LogColumn> {
  return {
    table: 'logs',
    columns: logColumns,
    defaults: defaultVisibility(admin),
    locked: admin ? [] : adminColumns,
  };
}

export type Tone = 'green' | 'yellow' | 'red';

/** Colour of the whole request time (spec 02 §9): under 101 s green, under 300 s yellow, else red. */
export function requestTimeTone(seconds: number): Tone {
  if (seconds < 101) return 'green';
  if (seconds < 300) return 'yellow';
  return 'red';
}

/** Colour of the first-response time (spec 02 §9): under 3 s green, under 10 s yellow, else red. */
export function frtTone(seconds: number): Tone {
  if (seconds < 3) return 'green';
  if (seconds < 10) return 'yellow';
  return 'red';
}

/** The default window of the log page (spec 02 §9): from a day ago to an hour ahead. */
export function defaultLogWindow(now: number = Date.now()): { start: number; end: number } {
  const seconds = Math.floor(now / 1000);
  return { start: seconds - 86_400, end: seconds + 3_600 };
}
