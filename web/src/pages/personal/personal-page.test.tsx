import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';

import { useSession } from '@/stores/session';
import { mockApi, statusData } from '@/test/api-mock';
import type { MockAnswer } from '@/test/api-mock';
import { stubClipboard } from '@/test/clipboard';
import { renderApp } from '@/test/render-app';
import { makeUser } from '@/test/users';

const alice = makeUser({
  id: 5,
  username: 'alice',
  display_name: 'Alice',
  role: 1,
  quota: 1_500_000,
  used_quota: 500_000,
  request_count: 12,
  aff_quota: 600_000,
  aff_history_quota: 900_000,
  aff_count: 3,
  setting: JSON.stringify({
    notify_type: 'webhook',
    quota_warning_threshold: 100000,
    webhook_url: 'https://hooks.example/x',
    webhook_secret: '',
    webhook_secret_set: true,
    notification_email: '',
    accept_unset_model_ratio_model: false,
  }),
});
const ok = { body: { success: true, message: '' } };

function setUp(extra: Record<string, MockAnswer> = {}, status: Record<string, unknown> = {}) {
  useSession.getState().setUser(alice);
  return mockApi({
    'GET /api/status': {
      body: statusData({
        display_in_currency: true,
        quota_per_unit: 500_000,
        server_address: 'https://gw.example',
        ...status,
      }),
    },
    'GET /api/user/self': { body: { success: true, message: '', data: alice } },
    'GET /api/user/aff': { body: { success: true, message: '', data: 'INV42' } },
    ...extra,
  });
}

afterEach(() => useSession.getState().clearUser());

describe('personal settings', () => {
  it('shows the profile with the ordinary badge, balance, usage and bindings', async () => {
    setUp();
    renderApp('/personal');
    expect(await screen.findByText('@alice')).toBeTruthy();
    expect(screen.getAllByText('普通用户').length).toBeGreaterThan(0);
    expect(screen.getByText('$3.00')).toBeTruthy();
    expect(screen.getByText('$1.00')).toBeTruthy();
    expect(screen.getByText('12')).toBeTruthy();
    expect(screen.getAllByText('未绑定').length).toBe(6);
  });

  it('shows the admin badge in red for the super admin', async () => {
    const root = makeUser({ id: 1, username: 'root', role: 100 });
    setUp({ 'GET /api/user/self': { body: { success: true, message: '', data: root } } });
    renderApp('/personal');
    const badge = await screen.findByText('管理员', { selector: '.ui-badge' });
    expect(badge.getAttribute('data-tone')).toBe('red');
  });

  it('copies the invite link built from the server address', async () => {
    const writeText = stubClipboard();
    setUp();
    renderApp('/personal');
    const link = await screen.findByDisplayValue('https://gw.example/register?aff=INV42');
    expect(link).toBeTruthy();
    await userEvent.click(screen.getByRole('button', { name: '复制' }));
    expect(writeText).toHaveBeenCalledWith('https://gw.example/register?aff=INV42');
    expect(await screen.findByText('邀请链接已复制到剪切板')).toBeTruthy();
  });

  it('transfers invite earnings of at least one quota unit', async () => {
    const calls = setUp({ 'POST /api/user/aff_transfer': ok });
    renderApp('/personal');
    await userEvent.click(await screen.findByRole('button', { name: '划转到余额' }));
    const dialog = await screen.findByRole('dialog', { name: '划转邀请收益' });
    const amount = within(dialog).getByLabelText('划转额度');
    expect(amount).toHaveProperty('value', '600000');
    await userEvent.clear(amount);
    await userEvent.type(amount, '1000');
    await userEvent.click(within(dialog).getByRole('button', { name: '划转' }));
    expect(await within(dialog).findByText('划转金额最低为 $1.00')).toBeTruthy();
    await userEvent.clear(amount);
    await userEvent.type(amount, '500000');
    await userEvent.click(within(dialog).getByRole('button', { name: '划转' }));
    await waitFor(() =>
      expect(calls.find((c) => c.method === 'POST')?.body).toEqual({ quota: 500_000 }),
    );
  });

  it('saves notification settings, keeping the write-only secret when left empty', async () => {
    const calls = setUp({ 'PUT /api/user/setting': ok });
    renderApp('/personal');
    const secret = await screen.findByLabelText('接口凭证');
    expect(secret.getAttribute('placeholder')).toBe('已设置，留空则保持不变');
    await userEvent.click(screen.getByRole('button', { name: '1000000 (5$)' }));
    const url = screen.getByLabelText('Webhook 地址');
    await userEvent.clear(url);
    await userEvent.type(url, 'http://insecure.example');
    await userEvent.click(screen.getByRole('button', { name: '保存设置' }));
    expect(await screen.findByText('Webhook 地址必须以 https:// 开头')).toBeTruthy();
    await userEvent.clear(url);
    await userEvent.type(url, 'https://hooks.example/y');
    await userEvent.click(screen.getByRole('button', { name: '保存设置' }));
    expect(await screen.findByText('通知设置已更新')).toBeTruthy();
    expect(calls.find((c) => c.method === 'PUT')?.body).toEqual({
      notify_type: 'webhook',
      quota_warning_threshold: 1_000_000,
      webhook_url: 'https://hooks.example/y',
      webhook_secret: '',
      notification_email: '',
      accept_unset_model_ratio_model: false,
    });
  });

  it('says when the notification settings could not be saved', async () => {
    setUp({
      'PUT /api/user/setting': {
        status: 400,
        body: { success: false, message: 'bad url', code: 'invalid_request' },
      },
    });
    renderApp('/personal');
    await userEvent.click(await screen.findByRole('button', { name: '保存设置' }));
    expect(await screen.findByText('通知设置更新失败：错误：bad url')).toBeTruthy();
  });

  it('resets the system access token and copies it', async () => {
    const writeText = stubClipboard();
    setUp({ 'GET /api/user/token': { body: { success: true, message: '', data: 'tok-123' } } });
    renderApp('/personal');
    await userEvent.click(await screen.findByRole('button', { name: '生成令牌' }));
    expect(await screen.findByText('tok-123')).toBeTruthy();
    expect(writeText).toHaveBeenCalledWith('tok-123');
    expect(await screen.findByText('令牌已重置并已复制到剪贴板')).toBeTruthy();
  });

  it('changes the password after checking the spec rules', async () => {
    const calls = setUp({ 'PUT /api/user/self': ok });
    renderApp('/personal');
    const submit = await screen.findByRole('button', { name: '修改密码' });
    await userEvent.click(submit);
    expect(await screen.findByText('请输入原密码！')).toBeTruthy();
    expect(screen.getByText('请输入新密码！')).toBeTruthy();
    await userEvent.type(screen.getByLabelText('原密码'), 'old-pass-1');
    await userEvent.type(screen.getByLabelText('新密码'), 'old-pass-1');
    await userEvent.type(screen.getByLabelText('确认新密码'), 'old-pass-1');
    await userEvent.click(submit);
    expect(await screen.findByText('新密码需要和原密码不一致！')).toBeTruthy();
    await userEvent.clear(screen.getByLabelText('新密码'));
    await userEvent.type(screen.getByLabelText('新密码'), 'new-pass-1');
    await userEvent.click(submit);
    expect(await screen.findByText('两次输入的密码不一致！')).toBeTruthy();
    await userEvent.clear(screen.getByLabelText('确认新密码'));
    await userEvent.type(screen.getByLabelText('确认新密码'), 'new-pass-1');
    await userEvent.click(submit);
    expect(await screen.findByText('密码修改成功！')).toBeTruthy();
    expect(calls.find((c) => c.method === 'PUT')?.body).toEqual({
      original_password: 'old-pass-1',
      password: 'new-pass-1',
    });
  });

  it('binds an email with the mailed code', async () => {
    const calls = setUp({ 'GET /api/verification': ok, 'GET /api/oauth/email/bind': ok });
    renderApp('/personal');
    await userEvent.click(await screen.findByRole('button', { name: '绑定' }));
    const dialog = await screen.findByRole('dialog', { name: '绑定邮箱地址' });
    await userEvent.click(within(dialog).getByRole('button', { name: '确认绑定' }));
    expect(await within(dialog).findByText('请输入邮箱！')).toBeTruthy();
    expect(within(dialog).getByText('请输入邮箱验证码！')).toBeTruthy();
    await userEvent.type(within(dialog).getByLabelText('邮箱'), 'alice@example.com');
    await userEvent.click(within(dialog).getByRole('button', { name: '获取验证码' }));
    expect(await within(dialog).findByRole('button', { name: /重新发送/ })).toHaveProperty(
      'disabled',
      true,
    );
    await userEvent.type(within(dialog).getByLabelText('验证码'), '123456');
    await userEvent.click(within(dialog).getByRole('button', { name: '确认绑定' }));
    expect(await screen.findByText('邮箱账户绑定成功！')).toBeTruthy();
    expect(
      calls.some((c) => c.url === '/api/oauth/email/bind?email=alice%40example.com&code=123456'),
    ).toBe(true);
  });

  it('deletes the account only with the typed username and the password, then goes to /login', async () => {
    const calls = setUp({ 'DELETE /api/user/self': ok });
    const { router } = renderApp('/personal');
    await userEvent.click(await screen.findByRole('button', { name: '删除个人账户' }));
    const dialog = await screen.findByRole('dialog', { name: '确定要删除你的账户吗？' });
    await userEvent.type(within(dialog).getByLabelText('账户名'), 'alic');
    await userEvent.click(within(dialog).getByRole('button', { name: '确认删除' }));
    expect(await within(dialog).findByText('请输入你的账户名以确认删除！')).toBeTruthy();
    expect(calls.some((c) => c.method === 'DELETE')).toBe(false);
    await userEvent.type(within(dialog).getByLabelText('账户名'), 'e');
    await userEvent.type(within(dialog).getByLabelText('当前密码'), 'alicepass1');
    await userEvent.click(within(dialog).getByRole('button', { name: '确认删除' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/login'));
    expect(calls.find((c) => c.method === 'DELETE')?.body).toEqual({
      password: 'alicepass1',
      code: '',
    });
    expect(useSession.getState().user).toBeNull();
    expect(await screen.findByText('账户已删除！')).toBeTruthy();
  });
});
