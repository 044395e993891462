import { describe, expect, it } from 'vitest';

import { fieldErrors } from '@/test/schema';

import { registerSchema, resetRequestSchema } from './register-schema';

const valid = {
  username: 'alice',
  password: 'alice-pass-1',
  password2: 'alice-pass-1',
  email: '',
  verification_code: '',
};

describe('registerSchema', () => {
  it('accepts a valid form without email verification', () => {
    expect(fieldErrors(registerSchema(false), valid)).toEqual({});
  });

  it('applies the spec rules: username ≤ 12, password 8–20, matching confirmation', () => {
    expect(fieldErrors(registerSchema(false), { ...valid, username: '  ' })).toEqual({
      username: 'register.validation.usernameRequired',
    });
    expect(fieldErrors(registerSchema(false), { ...valid, username: 'a'.repeat(13) })).toEqual({
      username: 'register.validation.usernameTooLong',
    });
    expect(
      fieldErrors(registerSchema(false), { ...valid, password: 'short', password2: 'short' }),
    ).toEqual({ password: 'register.validation.passwordTooShort' });
    expect(
      fieldErrors(registerSchema(false), {
        ...valid,
        password: 'x'.repeat(21),
        password2: 'x'.repeat(21),
      }),
    ).toEqual({ password: 'register.validation.passwordTooLong' });
    expect(fieldErrors(registerSchema(false), { ...valid, password2: 'other-pass' })).toEqual({
      password2: 'register.validation.mismatch',
    });
  });

  it('needs an email and a code when email verification is on', () => {
    expect(fieldErrors(registerSchema(true), valid)).toEqual({
      email: 'register.validation.emailRequired',
      verification_code: 'register.validation.codeRequired',
    });
    expect(
      fieldErrors(registerSchema(true), { ...valid, email: 'nope', verification_code: '123' }),
    ).toEqual({ email: 'register.validation.emailInvalid' });
    expect(
      fieldErrors(registerSchema(true), {
        ...valid,
        email: 'a@example.com',
        verification_code: '123456',
      }),
    ).toEqual({});
  });
});

describe('resetRequestSchema', () => {
  it('needs a valid email', () => {
    expect(fieldErrors(resetRequestSchema, { email: '' })).toEqual({
      email: 'register.validation.emailRequired',
    });
    expect(fieldErrors(resetRequestSchema, { email: 'a@example.com' })).toEqual({});
  });
});
