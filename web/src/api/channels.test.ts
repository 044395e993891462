import { describe, expect, it } from 'vitest';

import { disabledKeys, statusInfo } from './channels';

describe('other_info', () => {
  it('reads the disabled keys sorted by line, skipping malformed entries', () => {
    const other_info = JSON.stringify({
      status_reason: 'all keys are disabled',
      status_time: 5,
      disabled_keys: [
        { index: 3, fingerprint: 'a', reason: 'invalid key', time: 9 },
        { fingerprint: 'no index' },
        'junk',
        { index: 1, fingerprint: 'b' },
      ],
    });
    expect(disabledKeys({ other_info })).toEqual([
      { index: 1, reason: '', time: 0 },
      { index: 3, reason: 'invalid key', time: 9 },
    ]);
    expect(statusInfo({ other_info })).toEqual({ reason: 'all keys are disabled', time: 5 });
  });

  it('has no disabled keys when other_info is empty, not JSON or without the list', () => {
    for (const other_info of ['', 'not json', '{}', '{"disabled_keys": {"index": 1}}', 'null']) {
      expect(disabledKeys({ other_info })).toEqual([]);
    }
  });
});
