import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';

import { useSession } from '@/stores/session';
import { mockApi, statusData } from '@/test/api-mock';
import type { MockAnswer } from '@/test/api-mock';
import { renderApp } from '@/test/render-app';
import { makeUser } from '@/test/users';

const root = makeUser({ id: 1, username: 'root', role: 100 });
const alice = makeUser({ id: 5, username: 'alice' });
const bob = makeUser({ id: 2, username: 'bob', quota: 1_000_000 });

const ok = (data: unknown) => ({ body: { success: true, message: '', data } });

/** A day window of $1 with $0.40 spent, and a rolling week of $5. */
const view = {
  budgets: {
    windows: [
      { period: 'day', rolling: false, limit: 500_000 },
      { period: 'week', rolling: true, limit: 2_500_000 },
    ],
    override: null,
  },
  windows: [
    {
      period: 'day',
      rolling: false,
      limit: 500_000,
      spent: 200_000,
      remaining: 300_000,
      resets_at: 1_800_000_000,
    },
    {
      period: 'week',
      rolling: true,
      limit: 2_500_000,
      spent: 200_000,
      remaining: 2_300_000,
      resets_at: 1_800_000_900,
    },
  ],
  time_zone: 'Asia/Shanghai',
};

function setUp(user: ReturnType<typeof makeUser>, extra: Record<string, MockAnswer>) {
  useSession.getState().setUser(user);
  return mockApi({
    'GET /api/status': { body: statusData({ display_in_currency: true, quota_per_unit: 500_000 }) },
    ...extra,
  });
}

afterEach(() => useSession.getState().clearUser());

describe('budget section', () => {
  it("shows a user's windows with what is spent and left, and saves an override", async () => {
    const calls = setUp(root, {
      'GET /api/user/2': ok(bob),
      'GET /api/user/2/budget': ok(view),
      'PUT /api/user/2/budget': ok(view),
    });
    renderApp('/user/edit/2');
    const table = await screen.findByRole('table', { name: '当前生效的预算窗口' });
    const day = within(table).getByRole('row', { name: /自然日/ });
    expect(within(day).getByText('$1.00')).toBeTruthy();
    expect(within(day).getByText('$0.40')).toBeTruthy();
    expect(within(day).getByText('$0.60')).toBeTruthy();
    expect(within(table).getByText('重置时间（日历窗口按 Asia/Shanghai）')).toBeTruthy();
    expect(within(table).getByRole('row', { name: /最近 7 天/ })).toBeTruthy();

    const form = screen.getByRole('group', { name: '设置预算' });
    await userEvent.click(within(form).getByRole('switch', { name: '临时覆盖' }));
    await userEvent.click(within(form).getByRole('button', { name: '保存预算' }));
    expect(await within(form).findByText('请填写覆盖的到期时间')).toBeTruthy();

    const adds = within(form).getAllByRole('button', { name: '添加窗口' });
    await userEvent.click(adds[1] as HTMLElement);
    const limits = within(form).getAllByRole('spinbutton', { name: '额度上限' });
    await userEvent.clear(limits[2] as HTMLElement);
    await userEvent.type(limits[2] as HTMLElement, '5000000');
    await userEvent.type(within(form).getByLabelText('覆盖到期时间'), '2030-01-02T03:04');
    await userEvent.click(within(form).getByRole('button', { name: '保存预算' }));
    expect(await screen.findByText('预算已保存！')).toBeTruthy();
    expect(calls.find((c) => c.method === 'PUT')?.body).toEqual({
      windows: view.budgets.windows,
      override: {
        windows: [{ period: 'day', rolling: false, limit: 5_000_000 }],
        until: Math.floor(new Date('2030-01-02T03:04').getTime() / 1000),
      },
    });
  });

  it('refuses the same window twice and a limit of 0 before saving', async () => {
    const calls = setUp(root, {
      'GET /api/user/2': ok(bob),
      'GET /api/user/2/budget': ok({
        ...view,
        budgets: { windows: [], override: null },
        windows: [],
      }),
    });
    renderApp('/user/edit/2');
    expect(await screen.findByText('未设置预算')).toBeTruthy();
    const form = screen.getByRole('group', { name: '设置预算' });
    const add = within(form).getByRole('button', { name: '添加窗口' });
    await userEvent.click(add);
    await userEvent.click(add);
    const kinds = within(form).getAllByRole('combobox', { name: '窗口' });
    await userEvent.selectOptions(kinds[1] as HTMLElement, 'day');
    await userEvent.click(within(form).getByRole('button', { name: '保存预算' }));
    expect(await within(form).findByText('同一种窗口不能重复设置')).toBeTruthy();
    await userEvent.selectOptions(kinds[1] as HTMLElement, 'month');
    const limits = within(form).getAllByRole('spinbutton', { name: '额度上限' });
    await userEvent.clear(limits[0] as HTMLElement);
    await userEvent.type(limits[0] as HTMLElement, '0');
    await userEvent.click(within(form).getByRole('button', { name: '保存预算' }));
    expect(await within(form).findByText('额度上限必须是大于 0 的整数')).toBeTruthy();
    await waitFor(() => expect(calls.some((c) => c.method === 'PUT')).toBe(false));
  });

  it("sets a token's budget from the token editor", async () => {
    const token = {
      id: 7,
      name: 'team',
      key: 'abcd**********wxyz',
      status: 1,
      expired_time: -1,
      remain_quota: 500_000,
    };
    const calls = setUp(alice, {
      'GET /api/token/': ok({ items: [token], page: 1, page_size: 10, total: 1 }),
      'GET /api/token/7': ok(token),
      'GET /api/user/models': ok([]),
      'GET /api/user/self/groups': ok({}),
      'GET /api/token/7/budget': ok({
        ...view,
        budgets: { windows: [], override: null },
        windows: [],
      }),
      'PUT /api/token/7/budget': ok(view),
    });
    renderApp('/token');
    const row = await screen.findByRole('row', { name: 'team' });
    await userEvent.click(within(row).getByRole('button', { name: '编辑' }));
    const drawer = await screen.findByRole('dialog', { name: '更新令牌信息' });
    const form = await within(drawer).findByRole('group', { name: '设置预算' });
    await userEvent.click(within(form).getByRole('button', { name: '添加窗口' }));
    await userEvent.selectOptions(
      within(form).getByRole('combobox', { name: '窗口' }),
      'month-rolling',
    );
    await userEvent.click(within(form).getByRole('button', { name: '保存预算' }));
    expect(await within(drawer).findByRole('table', { name: '当前生效的预算窗口' })).toBeTruthy();
    expect(calls.find((c) => c.method === 'PUT')?.body).toEqual({
      windows: [{ period: 'month', rolling: true, limit: 500_000 }],
      override: null,
    });
  });
});

describe('rate-limit section', () => {
  it("shows a user's limits and saves them, keeping what it does not edit", async () => {
    const stored = {
      concurrency_limit: 0,
      rpm_limit: 60,
      tpm_limit: 0,
      rpd_limit: 0,
      key_limits: [],
    };
    const calls = setUp(root, {
      'GET /api/user/2': ok(bob),
      'GET /api/user/2/budget': ok(view),
      'GET /api/user/2/limits': ok(stored),
      'PUT /api/user/2/limits': ok({ ...stored, concurrency_limit: 3 }),
    });
    renderApp('/user/edit/2');
    const form = await screen.findByRole('group', { name: '设置速率限制' });
    expect(within(form).getByLabelText('每分钟最多请求数（RPM）')).toHaveProperty('value', '60');
    const concurrency = within(form).getByLabelText('最大并发请求数');
    await userEvent.clear(concurrency);
    await userEvent.type(concurrency, '-1');
    expect(within(form).getByText('请输入大于等于 0 的整数')).toBeTruthy();
    await userEvent.clear(concurrency);
    await userEvent.type(concurrency, '3');
    await userEvent.click(within(form).getByRole('button', { name: '保存速率限制' }));
    expect(await screen.findByText('速率限制已保存！')).toBeTruthy();
    expect(calls.find((c) => c.method === 'PUT' && c.url.endsWith('/limits'))?.body).toEqual({
      ...stored,
      concurrency_limit: 3,
    });
  });
});
