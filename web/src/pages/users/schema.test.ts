import { describe, expect, it } from 'vitest';

import { fieldErrors } from '@/test/schema';

import { addQuotaSchema, addUserSchema, editUserSchema } from './schema';

describe('addUserSchema', () => {
  it('needs a username and a password (用户名和密码不能为空！)', () => {
    expect(fieldErrors(addUserSchema, { username: '', display_name: '', password: '' })).toEqual({
      username: 'add.validation.required',
      password: 'add.validation.required',
    });
  });

  it('accepts a user without a display name', () => {
    expect(
      fieldErrors(addUserSchema, { username: 'carol', display_name: '', password: 'carol-pass' }),
    ).toEqual({});
  });
});

describe('editUserSchema', () => {
  const valid = {
    username: 'carol',
    display_name: 'Carol',
    password: '',
    group: 'default',
    quota: 1000,
  };

  it('keeps the password when it is left empty', () => {
    expect(fieldErrors(editUserSchema, valid)).toEqual({});
  });

  it('needs at least 8 characters for a new password', () => {
    expect(fieldErrors(editUserSchema, { ...valid, password: 'short' })).toEqual({
      password: 'validation.passwordTooShort',
    });
  });

  it('needs an integer quota', () => {
    expect(fieldErrors(editUserSchema, { ...valid, quota: 1.5 })).toEqual({
      quota: 'validation.quotaInteger',
    });
    expect(fieldErrors(editUserSchema, { ...valid, quota: Number.NaN })).toEqual({
      quota: 'validation.quotaInteger',
    });
  });
});

describe('addQuotaSchema', () => {
  it('accepts negative integers', () => {
    expect(fieldErrors(addQuotaSchema, { amount: -500 })).toEqual({});
    expect(fieldErrors(addQuotaSchema, { amount: 0.5 })).toEqual({
      amount: 'validation.quotaInteger',
    });
  });
});
