import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';

import { useSession } from '@/stores/session';
import { mockApi, statusData } from '@/test/api-mock';
import { renderApp } from '@/test/render-app';
import { makeUser } from '@/test/users';

const root = makeUser({ id: 1, username: 'root', role: 100 });
const admin = makeUser({ id: 2, username: 'ada', role: 10 });

const row = {
  id: 9,
  created_at: 1_700_000_000,
  actor_id: 1,
  actor_name: 'root',
  action: 'user.quota',
  target: 'user:7',
  before: '{"quota":100}',
  after: '{"quota":600}',
  ip: '203.0.113.9',
};
const gateway = {
  ...row,
  id: 8,
  actor_id: 0,
  actor_name: '',
  action: 'topup.complete.notify',
  before: '',
  after: '{"trade_no":"T1"}',
};

function setUp() {
  return mockApi({
    'GET /api/status': { body: statusData() },
    'GET /api/audit': {
      body: { success: true, message: '', data: { items: [row, gateway], total: 2 } },
    },
  });
}

describe('audit log page', () => {
  it('lists the rows for root and filters by action and target', async () => {
    useSession.getState().setUser(root);
    const calls = setUp();
    renderApp('/audit');
    const table = await screen.findByRole('table');
    expect(within(table).getByText('root (#1)')).toBeTruthy();
    expect(within(table).getByText('{"quota":600}')).toBeTruthy();
    expect(within(table).getByText('系统')).toBeTruthy();
    await userEvent.type(screen.getByLabelText('操作（如 user. 或 option.update）'), 'user.');
    await userEvent.type(screen.getByLabelText('对象（如 user:7）'), 'user:7');
    await userEvent.click(screen.getByRole('button', { name: '查询' }));
    await waitFor(() =>
      expect(
        calls.some((c) => c.url.includes('action=user.') && c.url.includes('target=user%3A7')),
      ).toBe(true),
    );
  });

  it('is in the side menu for root only', async () => {
    useSession.getState().setUser(root);
    setUp();
    const view = renderApp('/token');
    expect(await screen.findByRole('link', { name: '审计日志' })).toBeTruthy();
    view.unmount();
    useSession.getState().setUser(admin);
    renderApp('/token');
    await screen.findByRole('link', { name: '用户管理' });
    expect(screen.queryByRole('link', { name: '审计日志' })).toBeNull();
  });
});
