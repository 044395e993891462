import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';

import { useSession } from '@/stores/session';
import { mockApi, statusData } from '@/test/api-mock';
import { renderApp } from '@/test/render-app';
import { makeUser } from '@/test/users';

const alice = makeUser({ id: 5, username: 'alice' });
const needsCode = {
  body: { success: true, message: 'enter the code', data: { require_2fa: true } },
};

afterEach(() => {
  useSession.getState().clearUser();
});

describe('two-factor sign-in', () => {
  it('asks for the code after the password, stores no user before it, then lands on /token', async () => {
    let codeTries = 0;
    const calls = mockApi({
      'GET /api/status': { body: statusData() },
      'POST /api/user/login': needsCode,
      'POST /api/user/login/2fa': ({ init }) => {
        codeTries += 1;
        return JSON.parse(String(init?.body)).code === '246810'
          ? { body: { success: true, message: '', data: alice } }
          : {
              status: 400,
              body: { success: false, message: 'wrong two-factor code', code: 'code_invalid' },
            };
      },
    });
    const { router } = renderApp('/login');
    const user = userEvent.setup();
    await user.type(await screen.findByLabelText('用户名或邮箱'), 'alice');
    await user.type(screen.getByLabelText('密码'), 'alicepass1');
    await user.click(screen.getByRole('button', { name: '登录' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/login/2fa'));
    expect(useSession.getState().user).toBeNull();

    await user.click(await screen.findByRole('button', { name: '验证并登录' }));
    expect(await screen.findByText('请输入验证码！')).toBeTruthy();
    expect(codeTries).toBe(0);
    await user.type(screen.getByLabelText('验证码'), '111111');
    await user.click(screen.getByRole('button', { name: '验证并登录' }));
    expect(await screen.findByText(/验证码错误或已使用过/)).toBeTruthy();
    expect(useSession.getState().user).toBeNull();
    await user.clear(screen.getByLabelText('验证码'));
    await user.type(screen.getByLabelText('验证码'), ' 246810 ');
    await user.click(screen.getByRole('button', { name: '验证并登录' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/token'));
    expect(useSession.getState().user?.id).toBe(5);
    expect(calls.filter((c) => c.url === '/api/user/login/2fa').at(-1)?.body).toEqual({
      code: '246810',
    });
  });

  it('takes a third-party sign-in to the code step too', async () => {
    mockApi({
      'GET /api/status': { body: statusData({ oidc_enabled: true }) },
      'GET /api/oauth/oidc': needsCode,
    });
    const { router } = renderApp('/oauth/oidc?code=c&state=s');
    await waitFor(() => expect(router.state.location.pathname).toBe('/login/2fa'));
    expect(useSession.getState().user).toBeNull();
    expect(await screen.findByRole('link', { name: '返回登录' })).toBeTruthy();
  });
});
