import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Mock } from 'vitest';

import { mockApi, statusData } from '@/test/api-mock';
import type { MockAnswer } from '@/test/api-mock';
import { renderApp } from '@/test/render-app';

function setupInfo(rootInit: boolean) {
  return {
    body: {
      success: true,
      message: '',
      data: {
        status: false,
        root_init: rootInit,
        database_type: 'redb',
      },
    },
  };
}

function renderSetup({ rootInit = false, post }: { rootInit?: boolean; post?: MockAnswer } = {}) {
  const calls = mockApi({
    'GET /api/status': { body: statusData({ setup: false, root_init: rootInit }) },
    'GET /api/setup': setupInfo(rootInit),
    'POST /api/setup': post ?? { body: { success: true, message: '' } },
  });
  renderApp('/setup');
  return { calls, posts: () => calls.filter((c) => c.method === 'POST') };
}

let assign: Mock<(url: string | URL) => void>;

beforeEach(() => {
  vi.useFakeTimers({ shouldAdvanceTime: true });
  assign = vi.fn<(url: string | URL) => void>();
  vi.spyOn(window, 'location', 'get').mockReturnValue({ ...window.location, assign });
});

afterEach(() => {
  vi.useRealTimers();
});

const user = () => userEvent.setup({ advanceTimers: vi.advanceTimersByTime });

async function fillAccount(password: string, confirm = password) {
  const u = user();
  await u.type(await screen.findByLabelText('用户名'), 'root');
  await u.type(screen.getByLabelText('密码'), password);
  await u.type(screen.getByLabelText('确认密码'), confirm);
  return u;
}

describe('setup page', () => {
  it('shows where the database file lives', async () => {
    renderSetup();
    expect(await screen.findByText('tollgate.redb')).toBeTruthy();
    expect(screen.getByText(/持久化存储卷/)).toBeTruthy();
  });

  it('rejects a short password without calling the server', async () => {
    const { posts } = renderSetup();
    const u = await fillAccount('short');
    await u.click(screen.getByRole('button', { name: '初始化系统' }));
    expect(await screen.findByText('密码长度至少为8个字符')).toBeTruthy();
    expect(posts()).toEqual([]);
  });

  it('rejects a confirmation that does not match', async () => {
    renderSetup();
    const u = await fillAccount('long-enough', 'long-enougH');
    await u.click(screen.getByRole('button', { name: '初始化系统' }));
    expect(await screen.findByText('两次输入的密码不一致')).toBeTruthy();
  });

  it('requires a username', async () => {
    renderSetup();
    const u = user();
    await u.click(await screen.findByRole('button', { name: '初始化系统' }));
    expect(await screen.findByText('请输入管理员用户名')).toBeTruthy();
  });

  it('sends the form with the usage mode as booleans, then reloads after 1.5 s', async () => {
    const { posts } = renderSetup();
    const u = await fillAccount('long-enough');
    await u.click(screen.getByRole('radio', { name: /自用模式/ }));
    await u.click(screen.getByRole('button', { name: '初始化系统' }));
    expect(await screen.findByText('系统初始化成功，正在跳转...')).toBeTruthy();
    expect(posts()[0]?.body).toEqual({
      username: 'root',
      password: 'long-enough',
      confirmPassword: 'long-enough',
      SelfUseModeEnabled: true,
      DemoSiteEnabled: false,
      ServerAddress: window.location.origin,
    });
    expect(assign, 'the success message stays a moment').not.toHaveBeenCalled();
    expect(screen.getByRole('button', { name: '初始化系统' })).toHaveProperty('disabled', true);
    vi.advanceTimersByTime(1500);
    expect(assign).toHaveBeenCalledWith('/');
  });

  it('pre-fills the server address with this origin and sends what root enters', async () => {
    const { posts } = renderSetup();
    const u = await fillAccount('long-enough');
    const address = screen.getByLabelText('服务器地址');
    expect(address).toHaveProperty('value', window.location.origin);
    await u.clear(address);
    await u.type(address, 'gw.example.com');
    await u.click(screen.getByRole('button', { name: '初始化系统' }));
    expect(await screen.findByText('服务器地址必须以 http:// 或 https:// 开头')).toBeTruthy();
    expect(posts()).toEqual([]);
    await u.clear(address);
    await u.type(address, 'https://gw.example.com/');
    await u.click(screen.getByRole('button', { name: '初始化系统' }));
    await screen.findByText('系统初始化成功，正在跳转...');
    expect(posts()[0]?.body).toMatchObject({ ServerAddress: 'https://gw.example.com' });
  });

  it('leaves the server address out when root empties the field', async () => {
    const { posts } = renderSetup();
    const u = await fillAccount('long-enough');
    await u.clear(screen.getByLabelText('服务器地址'));
    await u.click(screen.getByRole('button', { name: '初始化系统' }));
    await screen.findByText('系统初始化成功，正在跳转...');
    expect(posts()[0]?.body).not.toHaveProperty('ServerAddress');
  });

  it('shows the server message when setup is refused', async () => {
    renderSetup({ post: { body: { success: false, message: '系统已经初始化完成' } } });
    const u = await fillAccount('long-enough');
    await u.click(screen.getByRole('button', { name: '初始化系统' }));
    expect(await screen.findByText('系统已经初始化完成')).toBeTruthy();
  });

  it('falls back to a generic refusal without a server message', async () => {
    renderSetup({ post: { body: { success: false, message: '' } } });
    const u = await fillAccount('long-enough');
    await u.click(screen.getByRole('button', { name: '初始化系统' }));
    expect(await screen.findByText('初始化失败，请重试')).toBeTruthy();
  });

  it('re-enables the button after a request error', async () => {
    renderSetup({ post: { networkError: true } });
    const u = await fillAccount('long-enough');
    const submit = screen.getByRole('button', { name: '初始化系统' });
    await u.click(submit);
    expect(await screen.findByText('系统初始化失败，请重试')).toBeTruthy();
    await waitFor(() => expect(submit).toHaveProperty('disabled', false));
    expect(assign).not.toHaveBeenCalled();
  });

  it('asks only for system parameters when the root admin exists', async () => {
    const { posts } = renderSetup({ rootInit: true });
    expect(await screen.findByText('管理员账号已经初始化过，请继续设置系统参数。')).toBeTruthy();
    expect(screen.queryByLabelText('用户名')).toBeNull();
    const u = user();
    await u.click(screen.getByRole('radio', { name: /演示站点模式/ }));
    await u.click(screen.getByRole('button', { name: '初始化系统' }));
    await screen.findByText('系统初始化成功，正在跳转...');
    expect(posts()[0]?.body).toMatchObject({ SelfUseModeEnabled: false, DemoSiteEnabled: true });
  });

  it('explains the usage modes in a dialog', async () => {
    renderSetup();
    const u = user();
    await u.click(await screen.findByRole('button', { name: '查看使用模式说明' }));
    const dialog = await screen.findByRole('dialog', { name: '使用模式说明' });
    expect(dialog.textContent).toContain('开放注册');
    expect(dialog.textContent).toContain('隐藏注册入口');
    expect(dialog.textContent).toContain('演示站点');
  });
});
