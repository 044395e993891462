import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';

import { redirectTo } from '@/lib/redirect';
import { useSession } from '@/stores/session';
import { mockApi, statusData } from '@/test/api-mock';
import { renderApp } from '@/test/render-app';
import { makeUser } from '@/test/users';

vi.mock('@/lib/redirect', () => ({ redirectTo: vi.fn() }));

const alice = makeUser({ id: 7, username: 'alice' });
const signedIn = { body: { success: true, message: '', data: alice } };
const bound = { body: { success: true, message: 'bind', data: alice } };

afterEach(() => {
  useSession.getState().clearUser();
  localStorage.clear();
  vi.mocked(redirectTo).mockReset();
});

describe('third-party sign-in buttons', () => {
  it('sends the browser to the provider page the server built, with the stored invite code', async () => {
    localStorage.setItem('aff', 'INV1');
    const calls = mockApi({
      'GET /api/status': { body: statusData({ oidc_enabled: true }) },
      'GET /api/oauth/state': {
        body: {
          success: true,
          message: '',
          data: 'st',
          authorize_url: 'https://id.example/authorize?state=st',
        },
      },
    });
    renderApp('/login');
    await userEvent.click(await screen.findByRole('button', { name: 'OIDC' }));
    await waitFor(() =>
      expect(redirectTo).toHaveBeenCalledWith('https://id.example/authorize?state=st'),
    );
    const start = calls.find((c) => c.url.startsWith('/api/oauth/state'));
    expect(start?.url).toBe('/api/oauth/state?provider=oidc&aff=INV1');
  });

  it('signs in with a WeChat code and lands on /', async () => {
    const calls = mockApi({
      'GET /api/status': { body: statusData({ wechat_login: true, wechat_qrcode: '/qr.png' }) },
      'GET /api/oauth/wechat': signedIn,
    });
    const { router } = renderApp('/login');
    await userEvent.click(await screen.findByRole('button', { name: '微信' }));
    expect(await screen.findByRole('img', { name: '公众号二维码' })).toBeTruthy();
    await userEvent.type(screen.getByLabelText('验证码'), '123456');
    await userEvent.click(screen.getByRole('button', { name: '确定' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/'));
    expect(calls.some((c) => c.url === '/api/oauth/wechat?code=123456')).toBe(true);
    expect(useSession.getState().user?.id).toBe(7);
  });

  it('loads the Telegram widget and signs in with its fields', async () => {
    const calls = mockApi({
      'GET /api/status': {
        body: statusData({ telegram_oauth: true, telegram_bot_name: 'gate_bot' }),
      },
      'GET /api/oauth/telegram/login': signedIn,
    });
    const { router } = renderApp('/login');
    await waitFor(() =>
      expect(document.querySelector('script[data-telegram-login="gate_bot"]')).not.toBeNull(),
    );
    const script = document.querySelector<HTMLScriptElement>('script[data-telegram-login]');
    const callback = script?.dataset.onauth?.replace('(user)', '') ?? '';
    const handler = (window as unknown as Record<string, (u: unknown) => void>)[callback];
    handler?.({ id: 42, first_name: 'Ada', auth_date: 1700000000, hash: 'abc' });
    await waitFor(() => expect(router.state.location.pathname).toBe('/'));
    const call = calls.find((c) => c.url.startsWith('/api/oauth/telegram/login'));
    expect(call?.url).toBe(
      '/api/oauth/telegram/login?id=42&first_name=Ada&auth_date=1700000000&hash=abc',
    );
  });
});

describe('callback pages', () => {
  it('finish a sign-in once and land on /', async () => {
    const calls = mockApi({
      'GET /api/status': { body: statusData() },
      'GET /api/oauth/oidc': signedIn,
    });
    const { router } = renderApp('/oauth/oidc?code=c1&state=s1');
    await waitFor(() => expect(router.state.location.pathname).toBe('/'));
    const sent = calls.filter((c) => c.url.startsWith('/api/oauth/oidc'));
    expect(sent.map((c) => c.url)).toEqual(['/api/oauth/oidc?code=c1&state=s1']);
    expect(useSession.getState().user?.username).toBe('alice');
    expect(await screen.findByText('登录成功！')).toBeTruthy();
  });

  it('return a binding to /personal', async () => {
    useSession.getState().setUser(alice);
    mockApi({
      'GET /api/status': { body: statusData() },
      'GET /api/oauth/github': bound,
      'GET /api/user/self': signedIn,
    });
    const { router } = renderApp('/oauth/github?code=c&state=s');
    await waitFor(() => expect(router.state.location.pathname).toBe('/personal'));
    expect(await screen.findByText('绑定成功！')).toBeTruthy();
  });

  it('say that it failed and go back to /login after 1.5 s', async () => {
    mockApi({
      'GET /api/status': { body: statusData() },
      'GET /api/oauth/linuxdo': {
        status: 400,
        body: { success: false, message: 'state expired', code: 'code_invalid' },
      },
    });
    const { router } = renderApp('/oauth/linuxdo?code=c&state=s');
    expect(await screen.findByText('操作失败，重定向至登录界面中...')).toBeTruthy();
    expect(router.state.location.pathname).toBe('/oauth/linuxdo');
    await waitFor(() => expect(router.state.location.pathname).toBe('/login'), { timeout: 3000 });
  });

  it('fail without calling the server when the provider sent no code', async () => {
    const calls = mockApi({ 'GET /api/status': { body: statusData() } });
    renderApp('/oauth/github?error=access_denied&state=s');
    expect(await screen.findByText('操作失败，重定向至登录界面中...')).toBeTruthy();
    expect(calls.some((c) => c.url.startsWith('/api/oauth/'))).toBe(false);
  });
});
