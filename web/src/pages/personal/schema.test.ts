import { describe, expect, it } from 'vitest';

import { fieldErrors } from '@/test/schema';

import {
  bindEmailSchema,
  deleteAccountSchema,
  notificationSchema,
  passwordSchema,
  transferSchema,
} from './schema';

describe('passwordSchema', () => {
  it('applies the spec messages in order', () => {
    expect(fieldErrors(passwordSchema, { original: '', password: '', confirm: '' })).toEqual({
      original: 'password.validation.originalRequired',
      password: 'password.validation.newRequired',
    });
    expect(
      fieldErrors(passwordSchema, {
        original: 'same-pass-1',
        password: 'same-pass-1',
        confirm: 'same-pass-1',
      }),
    ).toEqual({ password: 'password.validation.same' });
    expect(
      fieldErrors(passwordSchema, {
        original: 'old-pass-1',
        password: 'new-pass-1',
        confirm: 'new-pass-2',
      }),
    ).toEqual({ confirm: 'password.validation.mismatch' });
    expect(
      fieldErrors(passwordSchema, {
        original: 'old-pass-1',
        password: 'new-pass-1',
        confirm: 'new-pass-1',
      }),
    ).toEqual({});
  });
});

describe('bindEmailSchema', () => {
  it('needs the email and the code', () => {
    expect(fieldErrors(bindEmailSchema, { email: '', code: '' })).toEqual({
      email: 'bindEmail.validation.emailRequired',
      code: 'bindEmail.validation.codeRequired',
    });
  });
});

describe('deleteAccountSchema', () => {
  it('needs the exact username', () => {
    const proof = { password: '', code: '' };
    expect(fieldErrors(deleteAccountSchema('alice'), { confirmation: 'Alice', ...proof })).toEqual({
      confirmation: 'delete.validation.mismatch',
    });
    expect(fieldErrors(deleteAccountSchema('alice'), { confirmation: 'alice', ...proof })).toEqual(
      {},
    );
  });
});

describe('transferSchema', () => {
  it('needs at least one quota unit', () => {
    expect(fieldErrors(transferSchema(500_000), { quota: 499_999 })).toEqual({
      quota: 'invite.transfer.validation.minimum',
    });
    expect(fieldErrors(transferSchema(500_000), { quota: 500_000 })).toEqual({});
  });
});

describe('notificationSchema', () => {
  const valid = {
    notify_type: 'email' as const,
    quota_warning_threshold: 500_000,
    webhook_url: '',
    webhook_secret: '',
    notification_email: '',
    accept_unset_model_ratio_model: false,
  };

  it('accepts email notifications without an address (the account email is used)', () => {
    expect(fieldErrors(notificationSchema, valid)).toEqual({});
  });

  it('needs an https webhook URL for webhook notifications', () => {
    expect(fieldErrors(notificationSchema, { ...valid, notify_type: 'webhook' })).toEqual({
      webhook_url: 'notify.validation.webhookRequired',
    });
    expect(
      fieldErrors(notificationSchema, {
        ...valid,
        notify_type: 'webhook',
        webhook_url: 'http://hooks.example/x',
      }),
    ).toEqual({ webhook_url: 'notify.validation.webhookHttps' });
    expect(
      fieldErrors(notificationSchema, {
        ...valid,
        notify_type: 'webhook',
        webhook_url: 'https://hooks.example/x',
      }),
    ).toEqual({});
  });

  it('rejects a negative threshold and a malformed email', () => {
    expect(
      fieldErrors(notificationSchema, {
        ...valid,
        quota_warning_threshold: -1,
        notification_email: 'nope',
      }),
    ).toEqual({
      quota_warning_threshold: 'notify.validation.threshold',
      notification_email: 'notify.validation.email',
    });
  });
});
