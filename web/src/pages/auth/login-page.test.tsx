import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';

import { useDefaultPasswordWarning } from '@/stores/default-password';
import { useSession } from '@/stores/session';
import { mockApi, statusData } from '@/test/api-mock';
import { renderApp } from '@/test/render-app';
import { makeUser } from '@/test/users';

const root = makeUser({
  id: 1,
  username: 'root',
  display_name: 'Root',
  role: 100,
  status: 1,
  group: 'default',
});

afterEach(() => {
  useSession.getState().clearUser();
  useDefaultPasswordWarning.getState().close();
});

describe('login page', () => {
  it('explains an expired session', async () => {
    mockApi({ 'GET /api/status': { body: statusData() } });
    renderApp('/login?expired=true');
    expect(await screen.findByText('未登录或登录已过期，请重新登录')).toBeTruthy();
  });

  it('requires username and password', async () => {
    const calls = mockApi({ 'GET /api/status': { body: statusData() } });
    renderApp('/login');
    await userEvent.click(await screen.findByRole('button', { name: '登录' }));
    expect(await screen.findByText('请输入用户名和密码！')).toBeTruthy();
    expect(calls.filter((c) => c.method === 'POST')).toEqual([]);
  });

  it('stores the user and lands on /token', async () => {
    const calls = mockApi({
      'GET /api/status': { body: statusData() },
      'POST /api/user/login': { body: { success: true, message: '', data: root } },
    });
    const { router } = renderApp('/login');
    await userEvent.type(await screen.findByLabelText('用户名或邮箱'), 'root');
    await userEvent.type(screen.getByLabelText('密码'), 'secret-pass');
    await userEvent.click(screen.getByRole('button', { name: '登录' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/token'));
    expect(calls.find((c) => c.method === 'POST')?.body).toEqual({
      username: 'root',
      password: 'secret-pass',
    });
    expect(useSession.getState().user?.id).toBe(1);
    expect(JSON.parse(localStorage.getItem('user') ?? 'null')).toMatchObject({ id: 1 });
    expect(await screen.findByText('登录成功！')).toBeTruthy();
  });

  it('warns root signed in with the default password, and not otherwise', async () => {
    mockApi({
      'GET /api/status': { body: statusData() },
      'POST /api/user/login': { body: { success: true, message: '', data: root } },
    });
    const { router } = renderApp('/login');
    await userEvent.type(await screen.findByLabelText('用户名或邮箱'), 'root');
    await userEvent.type(screen.getByLabelText('密码'), '123456');
    await userEvent.click(screen.getByRole('button', { name: '登录' }));
    const dialog = await screen.findByRole('alertdialog', { name: '您正在使用默认密码！' });
    expect(dialog.textContent).toContain('请立刻修改默认密码！');
    expect(router.state.location.pathname).toBe('/token');
    await userEvent.click(screen.getByRole('button', { name: '去修改密码' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/personal'));
    expect(screen.queryByRole('alertdialog')).toBeNull();
  });

  it('does not warn about a password of its own', async () => {
    mockApi({
      'GET /api/status': { body: statusData() },
      'POST /api/user/login': { body: { success: true, message: '', data: root } },
    });
    const { router } = renderApp('/login');
    await userEvent.type(await screen.findByLabelText('用户名或邮箱'), 'root');
    await userEvent.type(screen.getByLabelText('密码'), 'secret-pass');
    await userEvent.click(screen.getByRole('button', { name: '登录' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/token'));
    expect(await screen.findByText('登录成功！')).toBeTruthy();
    expect(screen.queryByText('您正在使用默认密码！')).toBeNull();
  });

  it('shows the server message when sign-in is refused', async () => {
    mockApi({
      'GET /api/status': { body: statusData() },
      'POST /api/user/login': { body: { success: false, message: '用户名或密码错误' } },
    });
    const { router } = renderApp('/login');
    await userEvent.type(await screen.findByLabelText('用户名或邮箱'), 'root');
    await userEvent.type(screen.getByLabelText('密码'), 'wrong');
    await userEvent.click(screen.getByRole('button', { name: '登录' }));
    expect(await screen.findByText('用户名或密码错误')).toBeTruthy();
    expect(router.state.location.pathname).toBe('/login');
  });
});

describe('user menu', () => {
  it('logs out: calls the server, forgets the user and goes to /login', async () => {
    useSession.getState().setUser(root);
    const calls = mockApi({
      'GET /api/status': { body: statusData() },
      'GET /api/user/logout': { body: { success: true, message: '' } },
    });
    const { router } = renderApp('/token');
    await userEvent.click(await screen.findByRole('button', { name: '用户菜单' }));
    await userEvent.click(await screen.findByRole('menuitem', { name: '退出登录' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/login'));
    expect(calls.some((c) => c.url === '/api/user/logout')).toBe(true);
    expect(useSession.getState().user).toBeNull();
    expect(await screen.findByText('注销成功！')).toBeTruthy();
  });
});
