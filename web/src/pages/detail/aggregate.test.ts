import { describe, expect, it } from 'vitest';

import { quotaDataSchema } from '@/api/dashboard';

import {
  aggregate,
  bucketLabel,
  bucketStart,
  byUser,
  CHARTED_MODELS,
  defaultDashboardWindow,
  OTHER_SERIES,
  perMinute,
} from './aggregate';

const row = (fields: Record<string, unknown>) => quotaDataSchema.parse(fields);
/** Local time → unix seconds. */
const at = (text: string) => new Date(text).getTime() / 1000;

describe('buckets', () => {
  it('start at the local hour, day and Monday', () => {
    const t = at('2026-01-08T15:42:10'); // a Thursday
    expect(bucketStart(t, 'hour')).toBe(at('2026-01-08T15:00'));
    expect(bucketStart(t, 'day')).toBe(at('2026-01-08T00:00'));
    expect(bucketStart(t, 'week')).toBe(at('2026-01-05T00:00'));
    expect(bucketStart(at('2026-01-11T23:59'), 'week')).toBe(at('2026-01-05T00:00'));
    expect(bucketStart(at('2026-01-12T00:00'), 'week')).toBe(at('2026-01-12T00:00'));
  });

  it('are labelled by hour or by date', () => {
    expect(bucketLabel(at('2026-01-08T15:00'), 'hour')).toBe('01-08 15:00');
    expect(bucketLabel(at('2026-01-08T00:00'), 'day')).toBe('01-08');
  });
});

describe('aggregate', () => {
  const rows = [
    row({
      model_name: 'gpt-4o',
      created_at: at('2026-01-08T10:00'),
      count: 2,
      quota: 300,
      token_used: 50,
    }),
    row({
      model_name: 'gpt-4o',
      created_at: at('2026-01-08T11:00'),
      count: 1,
      quota: 200,
      token_used: 20,
    }),
    row({
      model_name: 'mini',
      created_at: at('2026-01-09T09:00'),
      count: 5,
      quota: 100,
      prompt_tokens: 30,
      completion_tokens: 12,
    }),
  ];

  it('sums totals and models, most quota first', () => {
    const d = aggregate(rows, 'day', at('2026-01-08T00:00'), at('2026-01-09T23:00'));
    expect(d.totals).toEqual({ quota: 600, count: 8, tokens: 112 });
    expect(d.models).toEqual([
      { model: 'gpt-4o', quota: 500, count: 3, tokens: 70 },
      { model: 'mini', quota: 100, count: 5, tokens: 42 },
    ]);
    expect(d.series).toEqual(['gpt-4o', 'mini']);
  });

  it('folds hours into days, keeping empty buckets of the window', () => {
    const d = aggregate(rows, 'day', at('2026-01-07T12:00'), at('2026-01-09T12:00'));
    expect(d.buckets.map((b) => [bucketLabel(b.time, 'day'), b.quota, b.count])).toEqual([
      ['01-07', 0, 0],
      ['01-08', 500, 3],
      ['01-09', 100, 5],
    ]);
    expect(d.buckets[1]?.byModel).toEqual({ 'gpt-4o': 500 });
  });

  it('keeps hours apart by the hour', () => {
    const d = aggregate(rows, 'hour', at('2026-01-08T10:00'), at('2026-01-08T11:30'));
    expect(d.buckets.map((b) => b.quota)).toEqual([300, 200, 100]);
  });

  it('folds models past the charted few into one series', () => {
    const many = Array.from({ length: CHARTED_MODELS + 2 }, (_, i) =>
      row({ model_name: `m${i}`, created_at: at('2026-01-08T10:00'), count: 1, quota: 100 - i }),
    );
    const d = aggregate(many, 'hour', 0, 0);
    expect(d.series).toHaveLength(CHARTED_MODELS + 1);
    expect(d.series.at(-1)).toBe(OTHER_SERIES);
    expect(d.buckets[0]?.byModel[OTHER_SERIES]).toBe(
      100 - CHARTED_MODELS + (100 - CHARTED_MODELS - 1),
    );
  });
});

describe('rates and windows', () => {
  it('averages per minute over the window', () => {
    expect(perMinute(120, 0, 3600)).toBe(2);
    expect(perMinute(1, 0, 3600)).toBe(0);
    expect(perMinute(5, 10, 10)).toBe(0);
  });

  it('looks back a day, a week or four weeks, to an hour ahead', () => {
    const now = 1_768_046_400_000;
    const s = now / 1000;
    expect(defaultDashboardWindow('hour', now)).toEqual({ start: s - 86_400, end: s + 3_600 });
    expect(defaultDashboardWindow('day', now).start).toBe(s - 7 * 86_400);
    expect(defaultDashboardWindow('week', now).start).toBe(s - 28 * 86_400);
  });
});

describe('by user', () => {
  it('sums per username, most quota first, and names a user without one by id', () => {
    const users = byUser([
      row({ user_id: 2, username: 'alice', count: 1, quota: 10, token_used: 3 }),
      row({
        user_id: 3,
        username: 'bob',
        count: 2,
        quota: 30,
        prompt_tokens: 4,
        completion_tokens: 1,
      }),
      row({ user_id: 2, username: 'alice', count: 1, quota: 5, token_used: 2 }),
      row({ user_id: 7, count: 1, quota: 1 }),
    ]);
    expect(users).toEqual([
      { username: 'bob', quota: 30, count: 2, tokens: 5 },
      { username: 'alice', quota: 15, count: 2, tokens: 5 },
      { username: '7', quota: 1, count: 1, tokens: 0 },
    ]);
  });
});
