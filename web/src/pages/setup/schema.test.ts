import { describe, expect, it } from 'vitest';

import { setupSchema, toSetupPayload } from './schema';

const account = { username: 'root', password: 'long-enough', confirmPassword: 'long-enough' };

function issues(values: unknown) {
  const result = setupSchema.safeParse(values);
  return result.success ? [] : result.error.issues.map((i) => [i.path.join('.'), i.message]);
}

describe('setupSchema (spec 01 §5)', () => {
  it('accepts a complete form', () => {
    expect(issues({ usageMode: 'external', account })).toEqual([]);
  });

  it('requires a username', () => {
    expect(issues({ usageMode: 'external', account: { ...account, username: '  ' } })).toEqual([
      ['account.username', 'admin.username.required'],
    ]);
  });

  it('requires at least 8 password characters', () => {
    const short = { ...account, password: 'short', confirmPassword: 'short' };
    expect(issues({ usageMode: 'external', account: short })).toEqual([
      ['account.password', 'admin.password.tooShort'],
    ]);
  });

  it('requires the confirmation to match', () => {
    expect(
      issues({ usageMode: 'external', account: { ...account, confirmPassword: 'other-one' } }),
    ).toEqual([['account.confirmPassword', 'admin.confirmPassword.mismatch']]);
  });

  it('needs no account when the root admin exists', () => {
    expect(issues({ usageMode: 'demo' })).toEqual([]);
  });
});

describe('toSetupPayload', () => {
  it('sends the usage mode as the two booleans', () => {
    expect(toSetupPayload({ usageMode: 'self', account })).toEqual({
      ...account,
      SelfUseModeEnabled: true,
      DemoSiteEnabled: false,
    });
    expect(toSetupPayload({ usageMode: 'demo' })).toEqual({
      username: '',
      password: '',
      confirmPassword: '',
      SelfUseModeEnabled: false,
      DemoSiteEnabled: true,
    });
  });
});
