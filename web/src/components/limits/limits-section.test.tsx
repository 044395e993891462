import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';

import { useSession } from '@/stores/session';
import { mockApi, statusData } from '@/test/api-mock';
import type { MockAnswer } from '@/test/api-mock';
import { channelTypesData } from '@/test/channel-types';
import { renderApp } from '@/test/render-app';
import { makeUser } from '@/test/users';

import { limitsFormSchema, limitsValues, newKeyRow, toLimits } from './limits-schema';

const root = makeUser({ id: 1, username: 'root', role: 100 });
const ok = (data: unknown = null) => ({ body: { success: true, message: '', data } });
const none = { concurrency_limit: 0, rpm_limit: 0, tpm_limit: 0, rpd_limit: 0 };

const channel = {
  id: 7,
  name: 'seven',
  type: 1,
  key: '',
  key_set: true,
  key_count: 3,
  base_url: 'https://up.example.com',
  models: 'gpt-4o',
  group: 'default',
  status: 1,
};

function setUp(extra: Record<string, MockAnswer>) {
  useSession.getState().setUser(root);
  return mockApi({
    'GET /api/status': { body: statusData() },
    'GET /api/group/': ok(['default']),
    'GET /api/channel/types': ok(channelTypesData),
    'GET /api/channel/': ok({ items: [], page: 1, page_size: 10, total: 0 }),
    'GET /api/channel/7': ok(channel),
    ...extra,
  });
}

afterEach(() => useSession.getState().clearUser());

describe('limits form rules', () => {
  const schema = limitsFormSchema(3);
  const row = (line: number, rpm = 1) => ({ ...none, line, rpm_limit: rpm });
  const errors = (key_rows: ReturnType<typeof row>[]) => {
    const r = schema.safeParse({ ...none, key_rows });
    return r.success ? [] : r.error.issues.map((i) => i.message);
  };

  it('takes key lines 1 to the key count, each once, each with a limit', () => {
    expect(errors([row(1), row(3)])).toEqual([]);
    expect(errors([row(0)])).toEqual(['rate.key.validation.line']);
    expect(errors([row(4)])).toEqual(['rate.key.validation.line']);
    expect(errors([row(1.5)])).toEqual(['rate.key.validation.line']);
    expect(errors([row(2), row(2)])).toEqual(['rate.key.validation.twice']);
    expect(errors([row(2, 0)])).toEqual(['rate.key.validation.noLimit']);
    expect(schema.safeParse({ ...none, rpm_limit: -1, key_rows: [] }).success).toBe(false);
    expect(schema.safeParse({ ...none, rpm_limit: Number.NaN, key_rows: [] }).success).toBe(false);
  });

  it('shows key lines from 1 and sends them from 0', () => {
    const stored = { ...none, tpm_limit: 9, key_limits: [{ index: 0, ...none, rpm_limit: 5 }] };
    const values = limitsValues(stored);
    expect(values.key_rows).toEqual([{ line: 1, ...none, rpm_limit: 5 }]);
    expect(toLimits(values)).toEqual(stored);
    expect(newKeyRow(values.key_rows).line).toBe(2);
  });
});

describe('channel limits in the channel editor', () => {
  it('sets the channel limit and a key row, and says what is wrong before saving', async () => {
    const stored = { ...none, key_limits: [{ index: 2, ...none, concurrency_limit: 4 }] };
    const calls = setUp({
      'GET /api/channel/7/limits': ok(stored),
      'PUT /api/channel/7/limits': ({ init }) => ok(JSON.parse(String(init?.body))),
    });
    renderApp('/channel/edit/7');
    const user = userEvent.setup();
    const form = await screen.findByRole('group', { name: '设置速率限制' });
    const table = within(form).getByRole('table', { name: '按密钥限制' });
    const first = within(table).getByRole('row', { name: '第 1 条' });
    expect(within(first).getByLabelText('密钥行')).toHaveProperty('value', '3');
    expect(within(first).getByLabelText('最大并发请求数')).toHaveProperty('value', '4');

    await user.click(within(form).getByRole('button', { name: '添加密钥限制' }));
    const second = within(table).getByRole('row', { name: '第 2 条' });
    const line = within(second).getByLabelText('密钥行');
    expect(line).toHaveProperty('value', '1');
    await user.clear(line);
    await user.type(line, '3');
    expect(await within(form).findByText('同一行密钥不能重复设置')).toBeTruthy();
    await user.clear(line);
    await user.type(line, '4');
    expect(await within(form).findByText('密钥行必须是 1 到 3 之间的整数')).toBeTruthy();
    await user.clear(line);
    await user.type(line, '1');
    await user.click(within(form).getByRole('button', { name: '保存速率限制' }));
    expect(await within(form).findByText('每行至少设置一项限制，否则请删除该行')).toBeTruthy();
    const rpm = within(second).getByLabelText('每分钟最多请求数（RPM）');
    await user.clear(rpm);
    await user.type(rpm, '30');
    const channelRpm = within(form).getAllByLabelText('每分钟最多请求数（RPM）')[0] as HTMLElement;
    await user.clear(channelRpm);
    await user.type(channelRpm, '100');
    await user.click(within(form).getByRole('button', { name: '保存速率限制' }));
    expect(await screen.findByText('速率限制已保存！')).toBeTruthy();
    const put = calls.filter((c) => c.method === 'PUT' && c.url.endsWith('/api/channel/7/limits'));
    expect(put).toHaveLength(1);
    expect(put[0]?.body).toEqual({
      ...none,
      rpm_limit: 100,
      key_limits: [
        { index: 2, ...none, concurrency_limit: 4 },
        { index: 0, ...none, rpm_limit: 30 },
      ],
    });
  });

  it('removes a key row', async () => {
    const stored = { ...none, key_limits: [{ index: 0, ...none, rpm_limit: 1 }] };
    const calls = setUp({
      'GET /api/channel/7/limits': ok(stored),
      'PUT /api/channel/7/limits': ({ init }) => ok(JSON.parse(String(init?.body))),
    });
    renderApp('/channel/edit/7');
    const form = await screen.findByRole('group', { name: '设置速率限制' });
    await userEvent.click(within(form).getByRole('button', { name: '删除此行' }));
    expect(within(form).queryByRole('table')).toBeNull();
    await userEvent.click(within(form).getByRole('button', { name: '保存速率限制' }));
    await waitFor(() =>
      expect(calls.find((c) => c.method === 'PUT')?.body).toEqual({ ...none, key_limits: [] }),
    );
  });
});
