import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';

import { usePreferences } from '@/stores/preferences';
import { useSession } from '@/stores/session';
import { mockApi, statusData } from '@/test/api-mock';
import type { MockAnswer } from '@/test/api-mock';
import { renderApp } from '@/test/render-app';
import { makeUser } from '@/test/users';

const root = makeUser({ id: 1, username: 'root', display_name: 'Root', role: 100 });
const bob = makeUser({
  id: 2,
  username: 'bob',
  display_name: 'Bobby',
  quota: 1_000_000,
  used_quota: 250_000,
  request_count: 7,
});
const gone = makeUser({ id: 3, username: 'gone', DeletedAt: 1_700_000_000 });
const odd = makeUser({ id: 4, username: 'odd', role: 5, status: 3 });

const page = (items: unknown[]) => ({
  body: {
    success: true,
    message: '',
    data: { items, page: 1, page_size: 10, total: items.length },
  },
});

function setUp(extra: Record<string, MockAnswer> = {}) {
  useSession.getState().setUser(root);
  return mockApi({
    'GET /api/status': { body: statusData({ display_in_currency: true, quota_per_unit: 500_000 }) },
    'GET /api/user/': page([root, bob, gone, odd]),
    ...extra,
  });
}

afterEach(() => {
  useSession.getState().clearUser();
  usePreferences.getState().setPageSize(10);
});

describe('user management', () => {
  it('is for admins only', async () => {
    mockApi({ 'GET /api/status': { body: statusData() } });
    useSession.getState().setUser(makeUser({ id: 9, username: 'plain' }));
    const { router } = renderApp('/user');
    await waitFor(() => expect(router.state.location.pathname).toBe('/'));
  });

  it('lists users with quota, role and status, and deregistered rows without actions', async () => {
    const calls = setUp();
    renderApp('/user');
    expect(await screen.findByRole('heading', { name: '管理用户' })).toBeTruthy();
    const bobRow = await screen.findByRole('row', { name: 'bob' });
    expect(within(bobRow).getByText('Bobby')).toBeTruthy();
    expect(within(bobRow).getByText('剩余 $2.00')).toBeTruthy();
    expect(within(bobRow).getByText('已用 $0.50')).toBeTruthy();
    expect(within(bobRow).getByText('普通用户')).toBeTruthy();
    expect(within(bobRow).getByText('已激活')).toBeTruthy();
    expect(within(bobRow).getByRole('button', { name: '禁用' })).toBeTruthy();

    expect(within(screen.getByRole('row', { name: 'root' })).getByText('超级管理员')).toBeTruthy();

    const goneRow = screen.getByRole('row', { name: 'gone' });
    expect(within(goneRow).getAllByText('已注销').length).toBeGreaterThan(0);
    expect(within(goneRow).queryByRole('button')).toBeNull();

    const oddRow = screen.getByRole('row', { name: 'odd' });
    expect(within(oddRow).getByText('未知身份')).toBeTruthy();
    expect(within(oddRow).getByText('未知状态')).toBeTruthy();
    expect(within(oddRow).getByRole('button', { name: '启用' })).toHaveProperty('disabled', true);

    expect(calls.find((c) => c.url.startsWith('/api/user/'))?.url).toBe(
      '/api/user/?p=1&page_size=10',
    );
  });

  it('searches by keyword and group, and keeps the page size locally', async () => {
    const calls = setUp({ 'GET /api/user/search': page([bob]) });
    renderApp('/user');
    await screen.findByRole('row', { name: 'bob' });
    await userEvent.type(
      screen.getByPlaceholderText('搜索用户的 ID、用户名、显示名称或邮箱'),
      'bo',
    );
    await userEvent.type(screen.getByLabelText('分组'), 'vip');
    await userEvent.click(screen.getByRole('button', { name: '搜索' }));
    await waitFor(() =>
      expect(
        calls.some((c) => c.url === '/api/user/search?keyword=bo&group=vip&p=1&page_size=10'),
      ).toBe(true),
    );
    await userEvent.selectOptions(screen.getByLabelText('每页条数'), '50');
    await waitFor(() => expect(calls.some((c) => c.url.endsWith('page_size=50'))).toBe(true));
    expect(localStorage.getItem('page-size')).toBe('50');
  });

  it('disables a user: the row takes the returned status', async () => {
    const calls = setUp({
      'POST /api/user/manage': {
        body: { success: true, message: '', data: { role: 1, status: 2, DeletedAt: null } },
      },
    });
    renderApp('/user');
    const row = await screen.findByRole('row', { name: 'bob' });
    await userEvent.click(within(row).getByRole('button', { name: '禁用' }));
    expect(await within(row).findByText('已封禁')).toBeTruthy();
    expect(within(row).getByRole('button', { name: '启用' })).toBeTruthy();
    expect(calls.find((c) => c.method === 'POST')?.body).toEqual({ id: 2, action: 'disable' });
    expect(await screen.findByText('操作成功完成！')).toBeTruthy();
  });

  it('deletes only after confirmation, then shows the row as deregistered', async () => {
    const calls = setUp({
      'POST /api/user/manage': {
        body: {
          success: true,
          message: '',
          data: { role: 1, status: 1, DeletedAt: 1_800_000_000 },
        },
      },
    });
    renderApp('/user');
    const row = await screen.findByRole('row', { name: 'bob' });
    await userEvent.click(within(row).getByRole('button', { name: '注销' }));
    const dialog = await screen.findByRole('dialog', { name: '确定要注销此用户吗？' });
    expect(calls.some((c) => c.method === 'POST')).toBe(false);
    await userEvent.click(within(dialog).getByRole('button', { name: '确认注销' }));
    await waitFor(() => expect(within(row).queryByRole('button')).toBeNull());
    expect(calls.find((c) => c.method === 'POST')?.body).toEqual({ id: 2, action: 'delete' });
  });

  it('shows the server refusal of a manage action', async () => {
    setUp({
      'POST /api/user/manage': {
        status: 403,
        body: {
          success: false,
          message: 'only the super admin can promote users to admin',
          code: 'forbidden',
        },
      },
    });
    renderApp('/user');
    const row = await screen.findByRole('row', { name: 'bob' });
    await userEvent.click(within(row).getByRole('button', { name: '提升' }));
    expect(
      await screen.findByText('权限不足：only the super admin can promote users to admin'),
    ).toBeTruthy();
  });

  it('adds a user after checking the required fields', async () => {
    const calls = setUp({ 'POST /api/user/': { body: { success: true, message: '' } } });
    renderApp('/user');
    await userEvent.click(await screen.findByRole('button', { name: '添加用户' }));
    const dialog = await screen.findByRole('dialog', { name: '添加用户' });
    await userEvent.click(within(dialog).getByRole('button', { name: '创建' }));
    expect((await within(dialog).findAllByText('用户名和密码不能为空！')).length).toBe(2);
    await userEvent.type(within(dialog).getByLabelText('用户名'), 'carol');
    await userEvent.type(within(dialog).getByLabelText('显示名称'), 'Carol');
    await userEvent.type(within(dialog).getByLabelText('密码'), 'carol-pass');
    await userEvent.click(within(dialog).getByRole('button', { name: '创建' }));
    expect(await screen.findByText('用户账户创建成功！')).toBeTruthy();
    expect(calls.find((c) => c.method === 'POST')?.body).toEqual({
      username: 'carol',
      display_name: 'Carol',
      password: 'carol-pass',
    });
  });
});

describe('user edit', () => {
  it('falls back to a text group, adds negative quota and sends the quota with the one it loaded', async () => {
    const calls = setUp({
      'GET /api/user/2': { body: { success: true, message: '', data: bob } },
      'PUT /api/user/': { body: { success: true, message: '', data: bob } },
    });
    const { router } = renderApp('/user/edit/2');
    const username = await screen.findByLabelText('用户名');
    expect(username).toHaveProperty('value', 'bob');
    const group = screen.getByLabelText('分组');
    expect(group.tagName).toBe('INPUT');
    await userEvent.clear(group);
    await userEvent.type(group, 'vip');

    await userEvent.click(screen.getByRole('button', { name: '添加额度' }));
    const dialog = await screen.findByRole('dialog', { name: '添加额度' });
    const amount = within(dialog).getByLabelText('要添加的额度');
    await userEvent.clear(amount);
    await userEvent.type(amount, '-250000');
    await userEvent.click(within(dialog).getByRole('button', { name: '确定' }));
    await waitFor(() =>
      expect(screen.getByLabelText('剩余额度')).toHaveProperty('value', '750000'),
    );

    await userEvent.type(screen.getByLabelText('密码'), 'short');
    await userEvent.click(screen.getByRole('button', { name: '提交' }));
    expect(await screen.findByText('密码长度至少为 8 位')).toBeTruthy();
    await userEvent.clear(screen.getByLabelText('密码'));
    await userEvent.click(screen.getByRole('button', { name: '提交' }));

    await waitFor(() => expect(router.state.location.pathname).toBe('/user'));
    expect(calls.find((c) => c.method === 'PUT')?.body).toEqual({
      id: 2,
      username: 'bob',
      display_name: 'Bobby',
      group: 'vip',
      quota: 750_000,
      quota_before: 1_000_000,
    });
    expect(await screen.findByText('用户信息更新成功！')).toBeTruthy();
  });

  it('offers the groups from GET /api/group/ when it answers', async () => {
    setUp({
      'GET /api/user/2': { body: { success: true, message: '', data: bob } },
      'GET /api/group/': { body: { success: true, message: '', data: ['default', 'vip'] } },
    });
    renderApp('/user/edit/2');
    const group = await screen.findByRole('combobox', { name: '分组' });
    expect(
      within(group)
        .getAllByRole('option')
        .map((o) => o.textContent),
    ).toEqual(['default', 'vip']);
  });

  it("resets a user's two-factor sign-in after a confirmation", async () => {
    const calls = setUp({
      'GET /api/user/2': { body: { success: true, message: '', data: bob } },
      'DELETE /api/user/2/2fa': { body: { success: true, message: '', data: null } },
    });
    renderApp('/user/edit/2');
    await userEvent.click(await screen.findByRole('button', { name: '重置两步验证' }));
    const dialog = await screen.findByRole('dialog', { name: '确定要重置此用户的两步验证吗？' });
    expect(within(dialog).getByText(/用户 bob 在重新开启两步验证之前/)).toBeTruthy();
    expect(calls.some((c) => c.method === 'DELETE')).toBe(false);
    await userEvent.click(within(dialog).getByRole('button', { name: '重置两步验证' }));
    expect(await screen.findByText('两步验证已重置')).toBeTruthy();
    expect(calls.filter((c) => c.method === 'DELETE').map((c) => c.url)).toEqual([
      '/api/user/2/2fa',
    ]);
  });
});
