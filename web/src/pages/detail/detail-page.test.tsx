import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';

import { useSession } from '@/stores/session';
import { mockApi, statusData } from '@/test/api-mock';
import type { MockAnswer } from '@/test/api-mock';
import { renderApp } from '@/test/render-app';
import { makeUser } from '@/test/users';

const root = makeUser({ id: 1, username: 'root', role: 100 });
const alice = makeUser({ id: 2, username: 'alice' });
/** 2026-01-10 12:00:00 UTC. */
const NOW = 1_768_046_400_000;
const hourAgo = NOW / 1000 - 3_600;

const rows = [
  { model_name: 'gpt-4o', created_at: hourAgo, count: 3, quota: 750_000, token_used: 600 },
  { model_name: 'gpt-4o-mini', created_at: hourAgo, count: 7, quota: 250_000, token_used: 900 },
  { model_name: 'gpt-4o', created_at: hourAgo - 3_600, count: 2, quota: 500_000, token_used: 300 },
];
const ok = (data: unknown) => ({ body: { success: true, message: '', data } });

function setUp(user = root, extra: Record<string, MockAnswer> = {}, status = {}) {
  vi.spyOn(Date, 'now').mockReturnValue(NOW);
  useSession.getState().setUser(user);
  return mockApi({
    'GET /api/status': {
      body: statusData({ display_in_currency: true, quota_per_unit: 500_000, ...status }),
    },
    'GET /api/data/': ok(rows),
    'GET /api/data/self': ok(rows.slice(0, 2)),
    'GET /api/dashboard/cache_hit_rate': ok([
      {
        channel_id: 3,
        channel_name: 'claude-main',
        prompt_tokens: 40_000,
        cached_tokens: 30_000,
        hit_rate: 0.75,
      },
      { channel_id: 7, channel_name: '', prompt_tokens: 800, cached_tokens: 0, hit_rate: 0 },
    ]),
    'GET /api/data/users': ok([
      {
        user_id: 2,
        username: 'alice',
        created_at: hourAgo,
        count: 4,
        quota: 500_000,
        token_used: 10,
      },
      {
        user_id: 3,
        username: 'bob',
        created_at: hourAgo,
        count: 8,
        quota: 1_000_000,
        token_used: 20,
      },
      {
        user_id: 2,
        username: 'alice',
        created_at: hourAgo - 3_600,
        count: 1,
        quota: 250_000,
        token_used: 5,
      },
    ]),
    ...extra,
  });
}

afterEach(() => useSession.getState().clearUser());

const total = (key: string) => document.querySelector(`[data-total="${key}"] dd`)?.textContent;

describe('dashboard', () => {
  it('an admin sees totals and per-model figures for the last day by the hour', async () => {
    const calls = setUp();
    renderApp('/detail');
    expect(await screen.findByRole('heading', { name: '数据看板' })).toBeTruthy();
    // The sync note (spec 02 §9): Tollgate's figures need no sync, and the note says so.
    expect(screen.getByText('数据按小时汇总，随每次请求即时更新，无需等待同步。')).toBeTruthy();
    await screen.findByRole('row', { name: 'gpt-4o' });
    const s = NOW / 1000;
    expect(calls.filter((c) => c.url.startsWith('/api/data/')).map((c) => c.url)).toEqual([
      `/api/data/?start_timestamp=${s - 86_400}&end_timestamp=${s + 3_600}&default_time=hour`,
      `/api/data/users?start_timestamp=${s - 86_400}&end_timestamp=${s + 3_600}`,
    ]);
    expect(total('quota')).toBe('$3.00');
    expect(total('count')).toBe('12');
    expect(total('tokens')).toBe('1800');
    // 12 requests over 25 hours.
    expect(total('rpm')).toBe('0');
    const gpt = screen.getByRole('row', { name: 'gpt-4o' });
    expect(within(gpt).getByText('5')).toBeTruthy();
    expect(within(gpt).getByText('$2.50')).toBeTruthy();
    expect(within(gpt).getByText('83.3%')).toBeTruthy();
    const mini = screen.getByRole('row', { name: 'gpt-4o-mini' });
    expect(within(mini).getByText('$0.50')).toBeTruthy();
    const users = await screen.findByRole('region', { name: '按用户统计' });
    const names = within(users)
      .getAllByRole('row')
      .slice(1)
      .map((r) => r.getAttribute('aria-label'));
    expect(names).toEqual(['bob', 'alice']);
    expect(
      within(within(users).getByRole('row', { name: 'alice' })).getByText('$1.50'),
    ).toBeTruthy();
    expect(within(within(users).getByRole('row', { name: 'alice' })).getByText('5')).toBeTruthy();
    expect(await screen.findByRole('region', { name: '额度消耗趋势' })).toBeTruthy();
    expect(screen.getByRole('region', { name: '请求次数趋势' })).toBeTruthy();
    expect(screen.getByRole('region', { name: '模型消耗分布' })).toBeTruthy();
  });

  it("an admin sees each channel's prompt-cache hit rate in the window", async () => {
    const calls = setUp();
    renderApp('/detail');
    const card = await screen.findByRole('region', { name: '提示缓存命中率' });
    const s = NOW / 1000;
    expect(calls.map((c) => c.url)).toContain(
      `/api/dashboard/cache_hit_rate?start_timestamp=${s - 86_400}&end_timestamp=${s + 3_600}`,
    );
    const claude = await within(card).findByRole('row', { name: 'claude-main' });
    expect(within(claude).getByText('40.0k')).toBeTruthy();
    expect(within(claude).getByText('30.0k')).toBeTruthy();
    expect(within(claude).getByText('75.0%')).toBeTruthy();
    const gone = within(card).getByRole('row', { name: '已删除的渠道 #7' });
    expect(within(gone).getByText('0.0%')).toBeTruthy();
  });

  it('changes granularity, range and user', async () => {
    const calls = setUp();
    renderApp('/detail');
    await screen.findByRole('row', { name: 'gpt-4o' });
    fireEvent.change(screen.getByLabelText('起始时间'), { target: { value: '2026-01-01T00:00' } });
    fireEvent.change(screen.getByLabelText('结束时间'), { target: { value: '2026-01-10T00:00' } });
    await userEvent.selectOptions(screen.getByLabelText('时间粒度'), 'week');
    await userEvent.type(screen.getByLabelText('用户名称'), 'alice');
    await userEvent.click(screen.getByRole('button', { name: '查询' }));
    const start = new Date('2026-01-01T00:00').getTime() / 1000;
    const end = new Date('2026-01-10T00:00').getTime() / 1000;
    await waitFor(() =>
      expect(calls.map((c) => c.url)).toContain(
        `/api/data/?start_timestamp=${start}&end_timestamp=${end}&default_time=week&username=alice`,
      ),
    );
  });

  it("a user sees their own data in the status's default granularity", async () => {
    const calls = setUp(alice, {}, { data_export_default_time: 'day' });
    renderApp('/detail');
    await screen.findByRole('row', { name: 'gpt-4o-mini' });
    const s = NOW / 1000;
    expect(calls.filter((c) => c.url.startsWith('/api/data/')).map((c) => c.url)).toEqual([
      `/api/data/self?start_timestamp=${s - 7 * 86_400}&end_timestamp=${s + 3_600}&default_time=day`,
    ]);
    expect(screen.queryByLabelText('用户名称')).toBeNull();
    expect(total('quota')).toBe('$2.00');
    expect(screen.queryByRole('region', { name: '按用户统计' })).toBeNull();
    expect(screen.queryByRole('region', { name: '提示缓存命中率' })).toBeNull();
    expect(calls.some((c) => c.url.startsWith('/api/data/users'))).toBe(false);
    expect(calls.some((c) => c.url.startsWith('/api/dashboard/'))).toBe(false);
  });

  it('refuses a user a window over a month before asking', async () => {
    const calls = setUp(alice);
    renderApp('/detail');
    await screen.findByRole('row', { name: 'gpt-4o-mini' });
    fireEvent.change(screen.getByLabelText('起始时间'), { target: { value: '2025-11-01T00:00' } });
    await userEvent.click(screen.getByRole('button', { name: '查询' }));
    expect(await screen.findByText('时间跨度不能超过 1 个月')).toBeTruthy();
    expect(calls.filter((c) => c.url.startsWith('/api/data/'))).toHaveLength(1);
  });

  it('says when there is no data, and when the dashboard is off', async () => {
    setUp(
      root,
      { 'GET /api/data/': ok([]), 'GET /api/dashboard/cache_hit_rate': ok([]) },
      { enable_data_export: false },
    );
    renderApp('/detail');
    expect(await screen.findByText('所选时间范围内没有数据')).toBeTruthy();
    expect(await screen.findByText('所选时间范围内没有渠道处理过提示词')).toBeTruthy();
    expect(screen.getByText(/数据看板未启用/)).toBeTruthy();
    expect(total('quota')).toBe('$0.00');
  });
});
