import { act, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';

import { useManualCopy } from '@/stores/manual-copy';
import { mockApi, statusData } from '@/test/api-mock';
import { stubClipboard } from '@/test/clipboard';
import { renderApp } from '@/test/render-app';

const ok = { body: { success: true, message: '' } };

afterEach(() => {
  vi.useRealTimers();
  useManualCopy.getState().close();
});

describe('login page', () => {
  it('shows only the enabled third-party buttons', async () => {
    mockApi({
      'GET /api/status': { body: statusData({ github_oauth: true, wechat_login: true }) },
    });
    renderApp('/login');
    expect(await screen.findByRole('button', { name: 'GitHub' })).toBeTruthy();
    expect(screen.getByRole('button', { name: '微信' })).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'OIDC' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'LinuxDO' })).toBeNull();
  });

  it('hides the sign-up link in self-use mode', async () => {
    mockApi({ 'GET /api/status': { body: statusData({ self_use_mode_enabled: true }) } });
    renderApp('/login');
    expect(await screen.findByRole('link', { name: '忘记密码？' })).toBeTruthy();
    expect(screen.queryByRole('link', { name: '没有账户？立即注册' })).toBeNull();
  });

  it('waits for the Turnstile token when the bot check is on', async () => {
    const calls = mockApi({
      'GET /api/status': {
        body: statusData({ turnstile_check: true, turnstile_site_key: 'site-key' }),
      },
    });
    renderApp('/login');
    await userEvent.type(await screen.findByLabelText('用户名或邮箱'), 'root');
    await userEvent.type(screen.getByLabelText('密码'), 'secret-pass');
    await userEvent.click(screen.getByRole('button', { name: '登录' }));
    expect(await screen.findByText('请稍后几秒重试，Turnstile 正在检查用户环境！')).toBeTruthy();
    expect(calls.some((c) => c.method === 'POST')).toBe(false);
    expect(document.querySelector('script[src*="challenges.cloudflare.com"]')).not.toBeNull();
  });

  it('does not load the Turnstile script when the bot check is off', async () => {
    document.head.querySelectorAll('script').forEach((s) => s.remove());
    mockApi({ 'GET /api/status': { body: statusData() } });
    renderApp('/login');
    await screen.findByLabelText('用户名或邮箱');
    expect(document.querySelector('script[src*="challenges.cloudflare.com"]')).toBeNull();
  });
});

describe('register page', () => {
  it('is refused in self-use mode', async () => {
    mockApi({ 'GET /api/status': { body: statusData({ self_use_mode_enabled: true }) } });
    renderApp('/register');
    expect(await screen.findByText('当前为自用模式，不开放注册')).toBeTruthy();
    expect(screen.queryByLabelText('用户名')).toBeNull();
  });

  it('validates, stores ?aff=, sends it as aff_code, and goes to /login', async () => {
    const calls = mockApi({
      'GET /api/status': { body: statusData() },
      'POST /api/user/register': ok,
    });
    const { router } = renderApp('/register?aff=INV1');
    await userEvent.type(await screen.findByLabelText('用户名'), 'alice');
    await userEvent.type(screen.getByLabelText('密码'), 'short');
    await userEvent.type(screen.getByLabelText('确认密码'), 'other');
    await userEvent.click(screen.getByRole('button', { name: '注册' }));
    expect(await screen.findByText('密码长度不得小于 8 位！')).toBeTruthy();
    expect(screen.getByText('两次输入的密码不一致')).toBeTruthy();
    expect(localStorage.getItem('aff')).toBe('INV1');

    await userEvent.clear(screen.getByLabelText('密码'));
    await userEvent.type(screen.getByLabelText('密码'), 'alice-pass-1');
    await userEvent.clear(screen.getByLabelText('确认密码'));
    await userEvent.type(screen.getByLabelText('确认密码'), 'alice-pass-1');
    await userEvent.click(screen.getByRole('button', { name: '注册' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/login'));
    expect(calls.find((c) => c.method === 'POST')?.body).toEqual({
      username: 'alice',
      password: 'alice-pass-1',
      password2: 'alice-pass-1',
      email: '',
      verification_code: '',
      aff_code: 'INV1',
    });
    expect(await screen.findByText('注册成功！')).toBeTruthy();
  });

  it('with email verification, sends the code and counts down 30 s', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    const calls = mockApi({
      'GET /api/status': { body: statusData({ email_verification: true }) },
      'GET /api/verification': ok,
    });
    renderApp('/register');
    const user = userEvent.setup({ advanceTimers: vi.advanceTimersByTime });
    await user.click(await screen.findByRole('button', { name: '获取验证码' }));
    expect(await screen.findByText('请输入邮箱！')).toBeTruthy();
    await user.type(screen.getByLabelText('邮箱'), 'alice@example.com');
    await user.click(screen.getByRole('button', { name: '获取验证码' }));
    expect(await screen.findByText('验证码发送成功，请检查你的邮箱！')).toBeTruthy();
    expect(calls.find((c) => c.url.startsWith('/api/verification'))?.url).toBe(
      '/api/verification?email=alice%40example.com',
    );
    const button = screen.getByRole('button', { name: /重新发送/ });
    expect(button).toHaveProperty('disabled', true);
    for (let second = 0; second < 30; second++) {
      await act(async () => {
        await vi.advanceTimersByTimeAsync(1_000);
      });
    }
    expect(screen.getByRole('button', { name: '获取验证码' })).toHaveProperty('disabled', false);
  });
});

describe('password reset', () => {
  it('requests a reset mail, then waits out the countdown', async () => {
    const calls = mockApi({
      'GET /api/status': { body: statusData() },
      'GET /api/reset_password': ok,
    });
    renderApp('/reset');
    await userEvent.type(await screen.findByLabelText('邮箱'), 'nobody@example.com');
    await userEvent.click(screen.getByRole('button', { name: '提交' }));
    expect(await screen.findByText('重置邮件发送成功，请检查邮箱！')).toBeTruthy();
    expect(screen.getByRole('button', { name: /重试 \(\d+\)/ })).toHaveProperty('disabled', true);
    expect(calls.some((c) => c.url === '/api/reset_password?email=nobody%40example.com')).toBe(
      true,
    );
  });

  it('confirms the link, shows the new password and copies it', async () => {
    const writeText = stubClipboard();
    const calls = mockApi({
      'GET /api/status': { body: statusData() },
      'POST /api/user/reset': { body: { success: true, message: '', data: 'NewPass123' } },
    });
    renderApp('/user/reset?email=a%40example.com&token=tok');
    expect(await screen.findByDisplayValue('a@example.com')).toHaveProperty('readOnly', true);
    await userEvent.click(screen.getByRole('button', { name: '确认重置密码' }));
    expect(await screen.findByText('NewPass123')).toBeTruthy();
    expect(writeText).toHaveBeenCalledWith('NewPass123');
    expect(calls.find((c) => c.method === 'POST')?.body).toEqual({
      email: 'a@example.com',
      token: 'tok',
    });
    expect(await screen.findByText('新密码已复制到剪贴板')).toBeTruthy();
  });

  it('opens a manual-copy dialog when the clipboard refuses', async () => {
    stubClipboard(true);
    mockApi({
      'GET /api/status': { body: statusData() },
      'POST /api/user/reset': { body: { success: true, message: '', data: 'NewPass123' } },
    });
    renderApp('/user/reset?email=a%40example.com&token=tok');
    await userEvent.click(await screen.findByRole('button', { name: '确认重置密码' }));
    const dialog = await screen.findByRole('dialog', { name: '无法复制到剪贴板，请手动复制' });
    expect(dialog.querySelector('textarea')?.value).toBe('NewPass123');
  });
});
