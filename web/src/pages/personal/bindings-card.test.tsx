import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';

import { redirectTo } from '@/lib/redirect';
import { useSession } from '@/stores/session';
import { mockApi, statusData } from '@/test/api-mock';
import { renderApp } from '@/test/render-app';
import { makeUser } from '@/test/users';

vi.mock('@/lib/redirect', () => ({ redirectTo: vi.fn() }));

const bob = makeUser({ id: 9, username: 'bob' });
const self = { body: { success: true, message: '', data: bob } };

afterEach(() => {
  useSession.getState().clearUser();
  vi.mocked(redirectTo).mockReset();
});

describe('bindings card', () => {
  it('offers only the enabled methods and sends GitHub binding to the provider', async () => {
    useSession.getState().setUser(bob);
    const calls = mockApi({
      'GET /api/status': { body: statusData({ github_oauth: true }) },
      'GET /api/user/self': self,
      'GET /api/oauth/state': {
        body: { success: true, message: '', data: 's', authorize_url: 'https://gh.example/a' },
      },
    });
    renderApp('/personal');
    await userEvent.click(await screen.findByRole('button', { name: '绑定 GitHub' }));
    await waitFor(() => expect(redirectTo).toHaveBeenCalledWith('https://gh.example/a'));
    expect(calls.find((c) => c.url.startsWith('/api/oauth/state'))?.url).toBe(
      '/api/oauth/state?provider=github',
    );
    expect(screen.queryByRole('button', { name: '绑定 OIDC' })).toBeNull();
    expect(screen.queryByRole('button', { name: '绑定 LinuxDO' })).toBeNull();
  });

  it('binds WeChat with the official account code', async () => {
    useSession.getState().setUser(bob);
    const calls = mockApi({
      'GET /api/status': { body: statusData({ wechat_login: true }) },
      'GET /api/user/self': self,
      'GET /api/oauth/wechat/bind': { body: { success: true, message: 'bind', data: bob } },
    });
    renderApp('/personal');
    const row = (await screen.findByText('微信')).closest('li');
    await userEvent.click(within(row as HTMLElement).getByRole('button', { name: '绑定' }));
    await userEvent.type(await screen.findByLabelText('验证码'), '654321');
    await userEvent.click(screen.getByRole('button', { name: '确定' }));
    expect(await screen.findByText('微信账户绑定成功！')).toBeTruthy();
    expect(calls.some((c) => c.url === '/api/oauth/wechat/bind?code=654321')).toBe(true);
  });
});
