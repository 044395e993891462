import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';

import { tokenSchema } from '@/api/tokens';
import { useManualCopy } from '@/stores/manual-copy';
import { usePreferences } from '@/stores/preferences';
import { useSession } from '@/stores/session';
import { mockApi, statusData } from '@/test/api-mock';
import type { MockAnswer } from '@/test/api-mock';
import { stubClipboard } from '@/test/clipboard';
import { renderApp } from '@/test/render-app';
import { makeUser } from '@/test/users';

const alice = makeUser({ id: 5, username: 'alice' });

const token = (fields: { id: number; name: string } & Record<string, unknown>) =>
  tokenSchema.parse({
    key: 'abcd**********wxyz',
    status: 1,
    created_time: 1_700_000_000,
    expired_time: -1,
    remain_quota: 500_000,
    used_quota: 250_000,
    ...fields,
  });

const main = token({ id: 1, name: 'main' });
const limited = token({ id: 2, name: 'limited', model_limits_enabled: true, group: 'vip' });
const off = token({ id: 3, name: 'off', status: 2, unlimited_quota: true });
const expired = token({ id: 4, name: 'old', status: 3, expired_time: 1_600_000_000 });
const empty = token({ id: 6, name: 'empty', status: 4 });

const ok = (data: unknown) => ({ body: { success: true, message: '', data } });
const page = (items: unknown[]) => ok({ items, page: 1, page_size: 10, total: items.length });

function setUp(extra: Record<string, MockAnswer> = {}, status: Record<string, unknown> = {}) {
  useSession.getState().setUser(alice);
  return mockApi({
    'GET /api/status': {
      body: statusData({ display_in_currency: true, quota_per_unit: 500_000, ...status }),
    },
    'GET /api/token/': page([main, limited, off, expired, empty]),
    'GET /api/user/models': ok(['gpt-4o', 'claude-3-haiku']),
    'GET /api/user/self/groups': ok({
      default: { desc: 'default', ratio: 1 },
      vip: { desc: 'VIP', ratio: 2 },
    }),
    ...extra,
  });
}

afterEach(() => {
  useSession.getState().clearUser();
  useManualCopy.getState().close();
  usePreferences.getState().setPageSize(10);
  vi.unstubAllGlobals();
});

describe('/token list', () => {
  it('shows the banner and every status, quota, expiry and group', async () => {
    const calls = setUp();
    renderApp('/token');
    expect(await screen.findByRole('heading', { name: 'API 令牌' })).toBeTruthy();
    expect(screen.getByText(/令牌无法精确控制使用额度，只允许自用/)).toBeTruthy();

    const mainRow = await screen.findByRole('row', { name: 'main' });
    expect(within(mainRow).getByText('已启用')).toBeTruthy();
    expect(within(mainRow).getByText('已用 $0.50')).toBeTruthy();
    expect(within(mainRow).getByText('剩余 $1.00')).toBeTruthy();
    expect(within(mainRow).getByText('永不过期')).toBeTruthy();
    expect(within(mainRow).getByText('sk-abcd**********wxyz')).toBeTruthy();
    expect(within(mainRow).getByRole('button', { name: '禁用' })).toBeTruthy();

    const limitedRow = screen.getByRole('row', { name: 'limited' });
    expect(within(limitedRow).getByText('已启用：限制模型')).toBeTruthy();
    expect(within(limitedRow).getByText('vip')).toBeTruthy();

    const offRow = screen.getByRole('row', { name: 'off' });
    expect(offRow.getAttribute('data-state')).toBe('off');
    expect(within(offRow).getByText('已禁用')).toBeTruthy();
    expect(within(offRow).getByText('无限额度')).toBeTruthy();
    expect(within(offRow).getByRole('button', { name: '启用' })).toBeTruthy();

    expect(within(screen.getByRole('row', { name: 'old' })).getByText('已过期')).toBeTruthy();
    expect(within(screen.getByRole('row', { name: 'empty' })).getByText('已耗尽')).toBeTruthy();
    expect(calls.find((c) => c.url.startsWith('/api/token/'))?.url).toBe('/api/token/?p=1&size=10');
  });

  it('searches by name and key', async () => {
    const calls = setUp({ 'GET /api/token/search': page([main]) });
    renderApp('/token');
    await screen.findByRole('row', { name: 'main' });
    await userEvent.type(screen.getByLabelText('搜索关键字'), 'ma');
    await userEvent.type(screen.getByLabelText('密钥'), 'wxyz');
    await userEvent.click(screen.getByRole('button', { name: '查询' }));
    await waitFor(() =>
      expect(
        calls.some((c) => c.url === '/api/token/search?keyword=ma&token=wxyz&p=1&size=10'),
      ).toBe(true),
    );
  });

  it('copies a key through POST /api/token/{id}/key', async () => {
    const writeText = stubClipboard();
    const calls = setUp({ 'POST /api/token/1/key': ok({ key: 'sk-full-key-1' }) });
    renderApp('/token');
    const row = await screen.findByRole('row', { name: 'main' });
    await userEvent.click(within(row).getByRole('button', { name: '复制' }));
    await waitFor(() => expect(writeText).toHaveBeenCalledWith('sk-full-key-1'));
    expect(await screen.findByText('已复制到剪贴板！')).toBeTruthy();
    expect(calls.some((c) => c.method === 'POST' && c.url === '/api/token/1/key')).toBe(true);
  });

  it('shows the key in a manual-copy dialog when the clipboard refuses', async () => {
    stubClipboard(true);
    setUp({ 'POST /api/token/1/key': ok({ key: 'sk-full-key-1' }) });
    renderApp('/token');
    const row = await screen.findByRole('row', { name: 'main' });
    await userEvent.click(within(row).getByRole('button', { name: '复制' }));
    const dialog = await screen.findByRole('dialog', { name: '无法复制到剪贴板，请手动复制' });
    expect(dialog.querySelector('textarea')?.value).toBe('sk-full-key-1');
  });

  it('copy selected needs a selection, then copies name and key per line', async () => {
    const writeText = stubClipboard();
    setUp({
      'POST /api/token/1/key': ok({ key: 'sk-one' }),
      'POST /api/token/3/key': ok({ key: 'sk-three' }),
    });
    renderApp('/token');
    await screen.findByRole('row', { name: 'main' });
    await userEvent.click(screen.getByRole('button', { name: '复制所选令牌到剪贴板' }));
    expect(await screen.findByText('请至少选择一个令牌！')).toBeTruthy();
    await userEvent.click(screen.getByLabelText('选择 main'));
    await userEvent.click(screen.getByLabelText('选择 off'));
    await userEvent.click(screen.getByRole('button', { name: '复制所选令牌到剪贴板' }));
    await waitFor(() => expect(writeText).toHaveBeenCalledWith('main    sk-one\noff    sk-three'));
  });

  it('disables and enables with status_only, and deletes after confirming', async () => {
    const calls = setUp({
      'PUT /api/token/': ok(main),
      'DELETE /api/token/1/': ok(null),
    });
    renderApp('/token');
    const row = await screen.findByRole('row', { name: 'main' });
    await userEvent.click(within(row).getByRole('button', { name: '禁用' }));
    expect(await screen.findByText('操作成功完成！')).toBeTruthy();
    const put = calls.find((c) => c.method === 'PUT');
    expect(put?.url).toBe('/api/token/?status_only=true');
    expect(put?.body).toEqual({ id: 1, status: 2 });

    await userEvent.click(
      within(screen.getByRole('row', { name: 'off' })).getByRole('button', { name: '启用' }),
    );
    await waitFor(() =>
      expect(calls.filter((c) => c.method === 'PUT').at(-1)?.body).toEqual({ id: 3, status: 1 }),
    );

    await userEvent.click(within(row).getByRole('button', { name: '删除' }));
    const dialog = await screen.findByRole('dialog', { name: '确定要删除此令牌吗？' });
    expect(calls.some((c) => c.method === 'DELETE')).toBe(false);
    await userEvent.click(within(dialog).getByRole('button', { name: '删除' }));
    await waitFor(() => expect(calls.some((c) => c.method === 'DELETE')).toBe(true));
  });

  it('shows the server refusal to enable an expired token', async () => {
    setUp({
      'PUT /api/token/': {
        status: 400,
        body: {
          success: false,
          message: 'the token has expired and cannot be enabled',
          code: 'invalid_request',
        },
      },
    });
    renderApp('/token');
    const row = await screen.findByRole('row', { name: 'old' });
    await userEvent.click(within(row).getByRole('button', { name: '启用' }));
    expect(
      await screen.findByText('错误：the token has expired and cannot be enabled'),
    ).toBeTruthy();
  });

  it('opens a chat link with the address and the full key filled in', async () => {
    const target = { location: { href: '' }, close: vi.fn() };
    const open = vi.fn(() => target);
    vi.stubGlobal('open', open);
    setUp(
      { 'POST /api/token/1/key': ok({ key: 'sk-full' }) },
      {
        chats: [{ NextChat: 'https://chat.example/#/?settings={"key":"{key}","url":"{address}"}' }],
        server_address: 'https://gate.example',
      },
    );
    renderApp('/token');
    const row = await screen.findByRole('row', { name: 'main' });
    await userEvent.click(within(row).getByRole('button', { name: '聊天' }));
    await userEvent.click(await screen.findByRole('menuitem', { name: 'NextChat' }));
    await waitFor(() =>
      expect(target.location.href).toBe(
        'https://chat.example/#/?settings={"key":"sk-full","url":"https%3A%2F%2Fgate.example"}',
      ),
    );
  });

  it('says when no chat link is configured', async () => {
    setUp();
    renderApp('/token');
    const row = await screen.findByRole('row', { name: 'main' });
    await userEvent.click(within(row).getByRole('button', { name: '聊天' }));
    expect(await screen.findByText('请联系管理员配置聊天链接')).toBeTruthy();
  });
});

describe('/token editor', () => {
  it('validates, then creates a batch with suffixed names', async () => {
    const created: string[] = [];
    const calls = setUp({
      'POST /api/token/': ({ init }) => {
        const body = JSON.parse(String(init?.body)) as { name: string };
        created.push(body.name);
        return ok(token({ id: 10 + created.length, name: body.name }));
      },
    });
    renderApp('/token');
    await userEvent.click(await screen.findByRole('button', { name: '添加令牌' }));
    const drawer = await screen.findByRole('dialog', { name: '创建新的令牌' });
    await userEvent.clear(within(drawer).getByLabelText('过期时间'));
    await userEvent.type(within(drawer).getByLabelText('过期时间'), '2030-13-01 00:00:00');
    await userEvent.click(within(drawer).getByRole('button', { name: '提交' }));
    expect(await within(drawer).findByText('请输入令牌名称')).toBeTruthy();
    expect(within(drawer).getByText('过期时间格式错误！')).toBeTruthy();
    expect(calls.some((c) => c.method === 'POST')).toBe(false);

    await userEvent.type(within(drawer).getByLabelText('名称'), 'batch');
    await userEvent.click(within(drawer).getByRole('button', { name: '一天' }));
    await userEvent.click(within(drawer).getByRole('button', { name: '$10.00' }));
    expect(within(drawer).getByLabelText('额度')).toHaveProperty('value', '5000000');
    await userEvent.clear(within(drawer).getByLabelText('新建数量'));
    await userEvent.type(within(drawer).getByLabelText('新建数量'), '3');
    await userEvent.click(within(drawer).getByRole('switch', { name: '启用模型限制' }));
    await userEvent.click(within(drawer).getByLabelText('gpt-4o'));
    await userEvent.selectOptions(within(drawer).getByLabelText('令牌分组'), 'vip');
    await userEvent.click(within(drawer).getByRole('button', { name: '提交' }));

    expect(await screen.findByText('令牌创建成功，请在列表页面点击复制获取令牌！')).toBeTruthy();
    expect(created[0]).toBe('batch');
    expect(created.slice(1).every((n) => /^batch-[A-Za-z0-9]{6}$/.test(n))).toBe(true);
    expect(created).toHaveLength(3);
    const body = calls.find((c) => c.method === 'POST')?.body as Record<string, unknown>;
    expect(body).toMatchObject({
      remain_quota: 5_000_000,
      unlimited_quota: false,
      model_limits_enabled: true,
      model_limits: 'gpt-4o',
      group: 'vip',
    });
    expect(typeof body.expired_time).toBe('number');
    expect(body.expired_time as number).toBeGreaterThan(Date.now() / 1000);
    await waitFor(() => expect(screen.queryByRole('dialog', { name: '创建新的令牌' })).toBeNull());
  });

  it('keeps model limits locked until the toggle is on, and the group disabled without groups', async () => {
    setUp({ 'GET /api/user/self/groups': ok({}) });
    renderApp('/token');
    await userEvent.click(await screen.findByRole('button', { name: '添加令牌' }));
    const drawer = await screen.findByRole('dialog', { name: '创建新的令牌' });
    expect(await within(drawer).findByLabelText('gpt-4o')).toHaveProperty('disabled', true);
    const group = within(drawer).getByLabelText('令牌分组');
    expect(group).toHaveProperty('disabled', true);
    expect(within(group).getByText('管理员未设置用户可选分组')).toBeTruthy();
    await userEvent.click(within(drawer).getByRole('switch', { name: '设为无限额度' }));
    expect(within(drawer).getByLabelText('额度')).toHaveProperty('disabled', true);
  });

  it('loads a token for editing and PUTs the changes', async () => {
    const calls = setUp({
      'GET /api/token/2': ok({ ...limited, model_limits: 'claude-3-haiku', allow_ips: '10.0.0.1' }),
      'PUT /api/token/': ok(limited),
    });
    renderApp('/token');
    const row = await screen.findByRole('row', { name: 'limited' });
    await userEvent.click(within(row).getByRole('button', { name: '编辑' }));
    const drawer = await screen.findByRole('dialog', { name: '更新令牌信息' });
    const name = await within(drawer).findByLabelText('名称');
    expect(name).toHaveProperty('value', 'limited');
    expect(within(drawer).queryByLabelText('新建数量')).toBeNull();
    expect(within(drawer).getByLabelText('claude-3-haiku')).toHaveProperty('checked', true);
    await userEvent.clear(name);
    await userEvent.type(name, 'renamed');
    await userEvent.click(within(drawer).getByRole('button', { name: '提交' }));
    expect(await screen.findByText('令牌更新成功！')).toBeTruthy();
    expect(calls.find((c) => c.method === 'PUT')?.body).toEqual({
      id: 2,
      name: 'renamed',
      remain_quota: 500_000,
      unlimited_quota: false,
      expired_time: -1,
      model_limits_enabled: true,
      model_limits: 'claude-3-haiku',
      allow_ips: '10.0.0.1',
      group: 'vip',
    });
  });

  it('opens the integration guide with samples in five languages', async () => {
    setUp({}, { server_address: 'https://gate.example/' });
    renderApp('/token');
    await userEvent.click(await screen.findByRole('button', { name: 'API 接入指南' }));
    const drawer = await screen.findByRole('dialog', { name: 'API 接入指南' });
    expect(within(drawer).getByText('https://gate.example/v1')).toBeTruthy();
    const tabs = within(drawer)
      .getAllByRole('tab')
      .map((tab) => tab.textContent);
    expect(tabs).toEqual(['cURL', 'Python', 'Node.js', 'Go', 'Java']);
    expect(
      within(drawer).getByText(/curl https:\/\/gate\.example\/v1\/chat\/completions/),
    ).toBeTruthy();
    await userEvent.click(within(drawer).getByRole('tab', { name: 'Go' }));
    expect(within(drawer).getByText(/http\.NewRequest\("POST"/)).toBeTruthy();
  });
});
