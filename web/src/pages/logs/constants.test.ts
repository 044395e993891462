import { describe, expect, it } from 'vitest';

import { parseLogOther } from '@/api/logs';
import { fromLocalInput, toLocalInput } from '@/lib/time';
import { columnStorageKeys, loadColumns } from '@/stores/columns';

import {
  defaultLogWindow,
  defaultVisibility,
  frtTone,
  logColumnSpec,
  requestTimeTone,
} from './constants';

describe('log colours (spec 02 §9)', () => {
  it('use time: under 101 s green, under 300 s yellow, else red', () => {
    expect([0, 100, 100.9, 101, 299, 300, 1000].map(requestTimeTone)).toEqual([
      'green',
      'green',
      'green',
      'yellow',
      'yellow',
      'red',
      'red',
    ]);
  });

  it('first-response time: under 3 s green, under 10 s yellow, else red', () => {
    expect([0.1, 2.999, 3, 9.99, 10, 60].map(frtTone)).toEqual([
      'green',
      'green',
      'yellow',
      'yellow',
      'red',
      'red',
    ]);
  });
});

describe('log columns', () => {
  it('hides channel, username and retry by default for non-admins only', () => {
    const user = defaultVisibility(false);
    expect(user.channel || user.username || user.retry).toBe(false);
    expect(user.time && user.model && user.cost).toBe(true);
    expect(Object.values(defaultVisibility(true)).every(Boolean)).toBe(true);
  });

  it('reads stored settings over the defaults and ignores broken values', () => {
    localStorage.setItem(columnStorageKeys.logs, JSON.stringify({ model: false, time: 'x' }));
    const visible = loadColumns(logColumnSpec(true));
    expect(visible.model).toBe(false);
    expect(visible.time).toBe(true);
    localStorage.setItem(columnStorageKeys.logs, '{broken');
    expect(loadColumns(logColumnSpec(true))).toEqual(defaultVisibility(true));
  });

  it('keeps the admin columns hidden for a non-admin whatever is stored', () => {
    localStorage.setItem(columnStorageKeys.logs, JSON.stringify({ channel: true, retry: true }));
    const visible = loadColumns(logColumnSpec(false));
    expect(visible.channel || visible.retry).toBe(false);
  });
});

describe('log window and times', () => {
  it('runs from a day ago to an hour ahead', () => {
    expect(defaultLogWindow(1_000_000_000_000)).toEqual({
      start: 1_000_000_000 - 86_400,
      end: 1_000_000_000 + 3_600,
    });
  });

  it('round-trips local input values to the minute', () => {
    const seconds = 1_768_046_400;
    expect(fromLocalInput(toLocalInput(seconds))).toBe(seconds);
    expect(fromLocalInput('')).toBe(0);
    expect(fromLocalInput('nonsense')).toBe(0);
  });
});

describe('log other', () => {
  it('reads known fields and survives broken text', () => {
    expect(
      parseLogOther('{"frt":1200,"model_ratio":"x","admin_info":{"use_channel":[1,2]}}'),
    ).toMatchObject({ frt: 1200, model_ratio: undefined, admin_info: { use_channel: [1, 2] } });
    expect(parseLogOther('not json')).toEqual({});
    expect(parseLogOther('')).toEqual({});
    expect(parseLogOther('[1]')).toEqual({});
  });
});
