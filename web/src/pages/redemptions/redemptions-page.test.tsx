import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';

import { redemptionSchema } from '@/api/redemptions';
import { useManualCopy } from '@/stores/manual-copy';
import { usePreferences } from '@/stores/preferences';
import { useSession } from '@/stores/session';
import { mockApi, statusData } from '@/test/api-mock';
import type { MockAnswer } from '@/test/api-mock';
import { stubClipboard } from '@/test/clipboard';
import { renderApp } from '@/test/render-app';
import { fieldErrors } from '@/test/schema';
import { makeUser } from '@/test/users';

import { redemptionFormSchema } from './schema';

const root = makeUser({ id: 1, username: 'root', role: 100 });

const code = (fields: { id: number; name: string } & Record<string, unknown>) =>
  redemptionSchema.parse({
    key: `key-${fields.id}`,
    status: 1,
    quota: 500_000,
    created_time: 1_700_000_000,
    ...fields,
  });

const fresh = code({ id: 1, name: 'fresh' });
const off = code({ id: 2, name: 'off', status: 2 });
const used = code({
  id: 3,
  name: 'used',
  status: 3,
  used_user_id: 7,
  redeemed_time: 1_700_000_100,
});

const ok = (data: unknown) => ({ body: { success: true, message: '', data } });
const page = (items: unknown[], total = items.length) =>
  ok({ items, page: 1, page_size: 10, total });

function setUp(extra: Record<string, MockAnswer> = {}) {
  useSession.getState().setUser(root);
  return mockApi({
    'GET /api/status': {
      body: statusData({ display_in_currency: true, quota_per_unit: 500_000 }),
    },
    'GET /api/redemption/': page([fresh, off, used], 25),
    ...extra,
  });
}

afterEach(() => {
  useSession.getState().clearUser();
  useManualCopy.getState().close();
  usePreferences.getState().setPageSize(10);
  vi.restoreAllMocks();
});

describe('redemption form rules (spec 02 §5)', () => {
  it('allows an empty name on create only, caps names at 20 and counts at 1–100', () => {
    expect(fieldErrors(redemptionFormSchema(true), { name: '', quota: 1, count: 1 })).toEqual({});
    expect(fieldErrors(redemptionFormSchema(false), { name: '', quota: 1, count: 1 }).name).toBe(
      'validation.name',
    );
    expect(
      fieldErrors(redemptionFormSchema(true), { name: 'x'.repeat(21), quota: 1, count: 1 }).name,
    ).toBe('validation.name');
    const errors = fieldErrors(redemptionFormSchema(true), { name: 'a', quota: 0, count: 101 });
    expect(errors.quota).toBe('validation.quota');
    expect(errors.count).toBe('validation.count');
  });
});

describe('/redemption', () => {
  it('is for admins only', async () => {
    mockApi({ 'GET /api/status': { body: statusData() } });
    useSession.getState().setUser(makeUser({ id: 9, username: 'plain' }));
    const { router } = renderApp('/redemption');
    await waitFor(() => expect(router.state.location.pathname).toBe('/'));
  });

  it('lists codes with status, quota and redeemer; used codes cannot be enabled or edited', async () => {
    const calls = setUp();
    renderApp('/redemption');
    expect(await screen.findByRole('heading', { name: '兑换码管理' })).toBeTruthy();
    const freshRow = await screen.findByRole('row', { name: '1 fresh' });
    expect(within(freshRow).getByText('未使用')).toBeTruthy();
    expect(within(freshRow).getByText('$1.00')).toBeTruthy();
    expect(within(freshRow).getByText('无')).toBeTruthy();
    expect(within(freshRow).getByRole('button', { name: '编辑' })).toHaveProperty(
      'disabled',
      false,
    );

    const offRow = screen.getByRole('row', { name: '2 off' });
    expect(within(offRow).getByText('已禁用')).toBeTruthy();
    expect(within(offRow).getByRole('button', { name: '启用' })).toHaveProperty('disabled', false);
    expect(within(offRow).getByRole('button', { name: '编辑' })).toHaveProperty('disabled', true);

    const usedRow = screen.getByRole('row', { name: '3 used' });
    expect(within(usedRow).getByText('已使用')).toBeTruthy();
    expect(within(usedRow).getByText('用户 7')).toBeTruthy();
    expect(within(usedRow).getByRole('button', { name: '启用' })).toHaveProperty('disabled', true);
    expect(within(usedRow).getByRole('button', { name: '编辑' })).toHaveProperty('disabled', true);

    expect(screen.getByText('共 25 条')).toBeTruthy();
    await userEvent.click(screen.getByRole('button', { name: '下一页' }));
    await waitFor(() =>
      expect(calls.some((c) => c.url === '/api/redemption/?p=2&page_size=10')).toBe(true),
    );
  });

  it('searches by id or name', async () => {
    const calls = setUp({ 'GET /api/redemption/search': page([fresh]) });
    renderApp('/redemption');
    await screen.findByRole('row', { name: '1 fresh' });
    await userEvent.type(screen.getByLabelText('搜索兑换码的 ID 和名称'), 'fre');
    await userEvent.click(screen.getByRole('button', { name: '查询' }));
    await waitFor(() =>
      expect(
        calls.some((c) => c.url === '/api/redemption/search?keyword=fre&p=1&page_size=10'),
      ).toBe(true),
    );
  });

  it('copy selected needs a selection, then copies the codes one per line', async () => {
    const writeText = stubClipboard();
    setUp();
    renderApp('/redemption');
    await screen.findByRole('row', { name: '1 fresh' });
    await userEvent.click(screen.getByRole('button', { name: '复制所选兑换码到剪贴板' }));
    expect(await screen.findByText('请至少选择一个兑换码！')).toBeTruthy();
    await userEvent.click(screen.getByLabelText('全选'));
    await userEvent.click(screen.getByRole('button', { name: '复制所选兑换码到剪贴板' }));
    await waitFor(() => expect(writeText).toHaveBeenCalledWith('key-1\nkey-2\nkey-3'));
  });

  it('shows the codes in a manual-copy dialog when the clipboard refuses', async () => {
    stubClipboard(true);
    setUp();
    renderApp('/redemption');
    await screen.findByRole('row', { name: '1 fresh' });
    await userEvent.click(screen.getByLabelText('全选'));
    await userEvent.click(screen.getByRole('button', { name: '复制所选兑换码到剪贴板' }));
    const dialog = await screen.findByRole('dialog', { name: '无法复制到剪贴板，请手动复制' });
    expect(dialog.querySelector('textarea')?.value).toBe('key-1\nkey-2\nkey-3');
  });

  it('disables, enables and deletes', async () => {
    const calls = setUp({
      'PUT /api/redemption/': ok(fresh),
      'DELETE /api/redemption/2/': ok(null),
    });
    renderApp('/redemption');
    const row = await screen.findByRole('row', { name: '1 fresh' });
    await userEvent.click(within(row).getByRole('button', { name: '禁用' }));
    expect(await screen.findByText('操作成功完成！')).toBeTruthy();
    const put = calls.find((c) => c.method === 'PUT');
    expect(put?.url).toBe('/api/redemption/?status_only=true');
    expect(put?.body).toEqual({ id: 1, status: 2 });

    const offRow = screen.getByRole('row', { name: '2 off' });
    await userEvent.click(within(offRow).getByRole('button', { name: '启用' }));
    await waitFor(() =>
      expect(calls.filter((c) => c.method === 'PUT').at(-1)?.body).toEqual({ id: 2, status: 1 }),
    );
    await userEvent.click(within(offRow).getByRole('button', { name: '删除' }));
    const dialog = await screen.findByRole('dialog', { name: '确定要删除此兑换码吗？' });
    await userEvent.click(within(dialog).getByRole('button', { name: '删除' }));
    await waitFor(() =>
      expect(calls.some((c) => c.method === 'DELETE' && c.url === '/api/redemption/2/')).toBe(true),
    );
  });

  it('creates codes (name defaults to the quota) and offers them as <name>.txt', async () => {
    const createObjectURL = vi.fn(() => 'blob:codes');
    const revokeObjectURL = vi.fn();
    Object.assign(URL, { createObjectURL, revokeObjectURL });
    const clicked = vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(() => {});
    const calls = setUp({ 'POST /api/redemption/': ok(['aaa', 'bbb']) });
    renderApp('/redemption');
    await userEvent.click(await screen.findByRole('button', { name: '添加兑换码' }));
    const drawer = await screen.findByRole('dialog', { name: '创建新的兑换码' });
    expect(within(drawer).getByLabelText('额度')).toHaveProperty('value', '100000');
    await userEvent.clear(within(drawer).getByLabelText('生成数量'));
    await userEvent.type(within(drawer).getByLabelText('生成数量'), '101');
    await userEvent.click(within(drawer).getByRole('button', { name: '提交' }));
    expect(await within(drawer).findByText('生成数量必须是 1 到 100 之间的整数')).toBeTruthy();
    await userEvent.clear(within(drawer).getByLabelText('生成数量'));
    await userEvent.type(within(drawer).getByLabelText('生成数量'), '2');
    await userEvent.click(within(drawer).getByRole('button', { name: '$10.00' }));
    await userEvent.click(within(drawer).getByRole('button', { name: '提交' }));

    const done = await screen.findByRole('dialog', { name: '兑换码创建成功' });
    expect(calls.find((c) => c.method === 'POST')?.body).toEqual({
      name: '$10.00',
      quota: 5_000_000,
      count: 2,
    });
    expect(within(done).getByLabelText('生成的兑换码')).toHaveProperty('value', 'aaa\nbbb');
    await userEvent.click(within(done).getByRole('button', { name: '下载' }));
    expect(clicked).toHaveBeenCalledOnce();
    const link = clicked.mock.contexts[0] as HTMLAnchorElement;
    expect(link.download).toBe('$10.00.txt');
    expect(createObjectURL).toHaveBeenCalledOnce();
  });

  it('edits an unused code', async () => {
    const calls = setUp({
      'GET /api/redemption/1': ok(fresh),
      'PUT /api/redemption/': ok(fresh),
    });
    renderApp('/redemption');
    const row = await screen.findByRole('row', { name: '1 fresh' });
    await userEvent.click(within(row).getByRole('button', { name: '编辑' }));
    const drawer = await screen.findByRole('dialog', { name: '更新兑换码信息' });
    const name = await within(drawer).findByLabelText('名称');
    expect(name).toHaveProperty('value', 'fresh');
    expect(within(drawer).queryByLabelText('生成数量')).toBeNull();
    await userEvent.clear(name);
    await userEvent.type(name, 'renamed');
    await userEvent.click(within(drawer).getByRole('button', { name: '提交' }));
    expect(await screen.findByText('兑换码更新成功！')).toBeTruthy();
    expect(calls.find((c) => c.method === 'PUT')?.body).toEqual({
      id: 1,
      name: 'renamed',
      quota: 500_000,
    });
  });
});
