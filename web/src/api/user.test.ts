import { describe, expect, it } from 'vitest';

import {
  DEFAULT_QUOTA_WARNING_THRESHOLD,
  isDeregistered,
  parseUserSetting,
  userSchema,
} from './user';

describe('userSchema', () => {
  it('fills missing fields with neutral values', () => {
    const user = userSchema.parse({ id: 3, username: 'ada' });
    expect(user).toMatchObject({ role: 1, status: 1, group: 'default', quota: 0, DeletedAt: null });
    expect(isDeregistered(user)).toBe(false);
  });

  it('keeps DeletedAt as the deregistration time', () => {
    expect(
      isDeregistered(userSchema.parse({ id: 3, username: 'ada', DeletedAt: 1700000000 })),
    ).toBe(true);
  });
});

describe('parseUserSetting', () => {
  it('reads the server setting JSON, including whether a webhook secret is set', () => {
    const setting = parseUserSetting(
      JSON.stringify({
        notify_type: 'webhook',
        quota_warning_threshold: 100000,
        webhook_url: 'https://hooks.example/x',
        webhook_secret: '',
        webhook_secret_set: true,
        notification_email: '',
        accept_unset_model_ratio_model: true,
      }),
    );
    expect(setting).toEqual({
      notify_type: 'webhook',
      quota_warning_threshold: 100000,
      webhook_url: 'https://hooks.example/x',
      webhook_secret_set: true,
      notification_email: '',
      accept_unset_model_ratio_model: true,
    });
  });

  it('gives the defaults for empty, broken or never-saved settings', () => {
    for (const text of ['', 'not json', '{"notify_type":"","quota_warning_threshold":0}']) {
      expect(parseUserSetting(text)).toMatchObject({
        notify_type: 'email',
        quota_warning_threshold: DEFAULT_QUOTA_WARNING_THRESHOLD,
        webhook_secret_set: false,
      });
    }
  });
});
