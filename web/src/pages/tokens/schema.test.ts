import { describe, expect, it, vi } from 'vitest';

import { parseDateTime } from '@/lib/dates';
import { fieldErrors } from '@/test/schema';

import {
  batchName,
  createBatch,
  newTokenValues,
  parseExpiry,
  shortcutExpiry,
  tokenFormSchema,
  toTokenPayload,
} from './schema';

describe('token form rules (spec 02 §5)', () => {
  it('accepts the defaults once named', () => {
    expect(fieldErrors(tokenFormSchema, { ...newTokenValues, name: 'k' })).toEqual({});
  });

  it('needs a name', () => {
    expect(fieldErrors(tokenFormSchema, { ...newTokenValues, name: '  ' }).name).toBe(
      'validation.nameRequired',
    );
  });

  it('takes -1 or yyyy-MM-dd HH:mm:ss for the expiry, nothing else', () => {
    const expiry = (text: string) =>
      fieldErrors(tokenFormSchema, { ...newTokenValues, name: 'k', expiry: text }).expiry;
    expect(expiry('-1')).toBeUndefined();
    expect(expiry('2030-01-31 23:59:59')).toBeUndefined();
    expect(expiry('2030-02-30 10:00:00')).toBe('validation.expiry');
    expect(expiry('2030-01-31')).toBe('validation.expiry');
    expect(expiry('tomorrow')).toBe('validation.expiry');
  });

  it('wants an integer quota ≥ 0 and a positive integer count', () => {
    const errors = fieldErrors(tokenFormSchema, {
      ...newTokenValues,
      name: 'k',
      remain_quota: 1.5,
      count: 0,
    });
    expect(errors.remain_quota).toBe('validation.quotaInteger');
    expect(errors.count).toBe('validation.count');
    expect(
      fieldErrors(tokenFormSchema, { ...newTokenValues, name: 'k', remain_quota: Number.NaN })
        .remain_quota,
    ).toBe('validation.quotaInteger');
  });

  it('sends the expiry as Unix seconds and the models as comma text', () => {
    const payload = toTokenPayload({
      ...newTokenValues,
      name: 'k',
      expiry: '2030-01-31 23:59:59',
      model_limits_enabled: true,
      model_limits: ['gpt-4o', 'claude-3'],
      allow_ips: ' 10.0.0.1\n',
    });
    expect(payload.expired_time).toBe(parseDateTime('2030-01-31 23:59:59'));
    expect(payload.model_limits).toBe('gpt-4o,claude-3');
    expect(payload.allow_ips).toBe('10.0.0.1');
    expect(toTokenPayload({ ...newTokenValues, name: 'k' }).expired_time).toBe(-1);
  });

  it('shortcuts count from now', () => {
    const now = new Date(2030, 0, 31, 12, 0, 0).getTime();
    expect(shortcutExpiry('never', now)).toBe('-1');
    expect(shortcutExpiry('hour', now)).toBe('2030-01-31 13:00:00');
    expect(shortcutExpiry('day', now)).toBe('2030-02-01 12:00:00');
    expect(parseExpiry(shortcutExpiry('month', now))).not.toBeNull();
  });
});

describe('batch creation', () => {
  it('suffixes names from the second token on', () => {
    expect(batchName('key', 0)).toBe('key');
    expect(batchName('key', 1)).toMatch(/^key-[A-Za-z0-9]{6}$/);
  });

  it('stops at the first failure and reports how many were made', async () => {
    const create = vi
      .fn()
      .mockResolvedValueOnce({})
      .mockResolvedValueOnce({})
      .mockRejectedValueOnce(new Error('limit'));
    const payload = toTokenPayload({ ...newTokenValues, name: 'k' });
    const result = await createBatch(payload, 5, create);
    expect(result.created).toBe(2);
    expect(result.error).toBeInstanceOf(Error);
    expect(create).toHaveBeenCalledTimes(3);
  });
});
