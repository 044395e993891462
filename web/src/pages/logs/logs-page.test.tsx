import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';

import { logSchema } from '@/api/logs';
import { columnStorageKeys } from '@/stores/columns';
import { usePreferences } from '@/stores/preferences';
import { useSession } from '@/stores/session';
import { mockApi, statusData } from '@/test/api-mock';
import type { MockAnswer, RecordedCall } from '@/test/api-mock';
import { renderApp } from '@/test/render-app';
import { makeUser } from '@/test/users';

const root = makeUser({ id: 1, username: 'root', role: 100 });
const alice = makeUser({ id: 2, username: 'alice' });

/** 2026-01-10 12:00:00 UTC. */
const NOW = 1_768_046_400_000;

const makeLog = (fields: { id: number } & Record<string, unknown>) => logSchema.parse(fields);

const streamed = makeLog({
  id: 11,
  created_at: 1_768_040_000,
  type: 2,
  channel: 3,
  channel_name: 'openai-main',
  username: 'alice',
  user_id: 2,
  token_name: 'laptop',
  model_name: 'gpt-4o',
  group: 'vip',
  is_stream: true,
  use_time: 100,
  prompt_tokens: 120,
  completion_tokens: 80,
  quota: 250_000,
  content: '',
  other: JSON.stringify({
    model_ratio: 2.5,
    completion_ratio: 4,
    group_ratio: 1.5,
    cache_tokens: 64,
    cache_ratio: 0.5,
    frt: 2999,
    is_model_mapped: true,
    upstream_model_name: 'gpt-4o-2024-08-06',
    admin_info: {
      use_channel: [5, 3],
      attempts: [
        { c: 5, s: 502, ms: 340, e: 'server' },
        { c: 3, s: 200, ms: 1200, e: '' },
      ],
    },
  }),
});
const slow = makeLog({
  id: 12,
  created_at: 1_768_040_100,
  type: 2,
  channel: 3,
  username: 'alice',
  user_id: 2,
  token_name: 'laptop',
  model_name: 'gpt-4o-mini',
  is_stream: true,
  use_time: 300,
  quota: 500_000,
  other: JSON.stringify({ model_ratio: 0.075, frt: 10_000 }),
});
const middling = makeLog({
  id: 13,
  created_at: 1_768_040_200,
  type: 2,
  is_stream: true,
  use_time: 101,
  model_name: 'gpt-4o-mini',
  other: JSON.stringify({ frt: 3000 }),
});
const topUp = makeLog({
  id: 14,
  created_at: 1_768_040_300,
  type: 1,
  username: 'alice',
  user_id: 2,
  model_name: 'ignored',
  quota: 1_000_000,
  content: '兑换码充值 $2.00',
});

const ok = (data: unknown) => ({ body: { success: true, message: '', data } });
const page = (items: unknown[], total = items.length) =>
  ok({ items, page: 1, page_size: 10, total });

function setUp(user = root, extra: Record<string, MockAnswer> = {}) {
  vi.spyOn(Date, 'now').mockReturnValue(NOW);
  useSession.getState().setUser(user);
  const admin = user.role >= 10;
  return mockApi({
    'GET /api/status': { body: statusData({ display_in_currency: true, quota_per_unit: 500_000 }) },
    [admin ? 'GET /api/log/' : 'GET /api/log/self/']: page([streamed, slow, middling, topUp], 42),
    [admin ? 'GET /api/log/stat' : 'GET /api/log/self/stat']: ok({
      quota: 1_750_000,
      rpm: 7,
      tpm: 1234,
    }),
    'GET /api/group/': ok(['default', 'vip']),
    ...extra,
  });
}

const urls = (calls: RecordedCall[], path: string) =>
  calls.filter((c) => c.url.split('?')[0] === path).map((c) => c.url);

const headers = () =>
  screen.getAllByRole('columnheader', { hidden: true }).map((th) => th.textContent);

afterEach(() => {
  useSession.getState().clearUser();
  usePreferences.getState().setPageSize(10);
});

describe('usage log', () => {
  it('a user sees their own logs from a day ago to an hour ahead, without admin columns', async () => {
    const calls = setUp(alice);
    renderApp('/log');
    expect(await screen.findByRole('heading', { name: '使用日志' })).toBeTruthy();
    // The note on the time window (spec 02 §9), true to what the page asks for.
    expect(screen.getByText(/默认显示最近一天的日志，修改起止时间可查看更早的记录/)).toBeTruthy();
    await screen.findByRole('row', { name: 'log 11' });
    const start = NOW / 1000 - 86_400;
    const end = NOW / 1000 + 3_600;
    expect(urls(calls, '/api/log/self/')).toEqual([
      `/api/log/self/?p=1&page_size=10&type=0&start_timestamp=${start}&end_timestamp=${end}`,
    ]);
    expect(urls(calls, '/api/log/self/stat')).toEqual([
      `/api/log/self/stat?type=0&start_timestamp=${start}&end_timestamp=${end}`,
    ]);
    expect(calls.some((c) => c.url.startsWith('/api/log/?'))).toBe(false);
    expect(headers()).not.toContain('渠道');
    expect(headers()).not.toContain('用户');
    expect(headers()).not.toContain('重试');
    expect(screen.queryByLabelText('用户名称')).toBeNull();
    expect(screen.queryByLabelText('渠道 ID')).toBeNull();
    // Usernames are plain text for a user: no popover trigger.
    expect(screen.queryByRole('button', { name: /查看用户/ })).toBeNull();
  });

  it('shows the stat cards of the filter', async () => {
    setUp();
    renderApp('/log');
    const quota = await screen.findByText('$3.50');
    expect(quota.closest('[data-stat]')?.getAttribute('data-stat')).toBe('quota');
    expect(screen.getByText('7').closest('[data-stat]')?.getAttribute('data-stat')).toBe('rpm');
    expect(screen.getByText('1234').closest('[data-stat]')?.getAttribute('data-stat')).toBe('tpm');
    expect(screen.getByText('消耗额度')).toBeTruthy();
  });

  it('an admin sees channel, user and retry columns and filters by every field', async () => {
    const calls = setUp();
    renderApp('/log');
    const row = await screen.findByRole('row', { name: 'log 11' });
    expect(headers()).toEqual(
      expect.arrayContaining(['时间', '渠道', '用户', '令牌', '分组', '类型', '模型', '重试']),
    );
    expect(within(row).getByText('渠道：5 → 3')).toBeTruthy();
    expect(within(row).getByText('$0.50')).toBeTruthy();
    expect(within(row).getByText('消费')).toBeTruthy();
    expect(within(screen.getByRole('row', { name: 'log 14' })).getByText('充值')).toBeTruthy();
    // A top-up row has no model or cost.
    expect(within(screen.getByRole('row', { name: 'log 14' })).queryByText('ignored')).toBeNull();

    fireEvent.change(screen.getByLabelText('起始时间'), { target: { value: '2026-01-09T08:30' } });
    fireEvent.change(screen.getByLabelText('结束时间'), { target: { value: '2026-01-10T09:45' } });
    await userEvent.type(screen.getByLabelText('令牌名称'), 'laptop');
    await userEvent.type(screen.getByLabelText('模型名称'), 'gpt-4o');
    await userEvent.selectOptions(screen.getByLabelText('分组'), 'vip');
    await userEvent.type(screen.getByLabelText('用户名称'), 'alice');
    await userEvent.type(screen.getByLabelText('渠道 ID'), '3');
    await userEvent.selectOptions(screen.getByLabelText('日志类型'), '2');
    await userEvent.click(screen.getByRole('button', { name: '查询' }));

    const start = new Date('2026-01-09T08:30').getTime() / 1000;
    const end = new Date('2026-01-10T09:45').getTime() / 1000;
    const filter =
      `type=2&username=alice&token_name=laptop&model_name=gpt-4o` +
      `&start_timestamp=${start}&end_timestamp=${end}&channel=3&group=vip`;
    await waitFor(() =>
      expect(urls(calls, '/api/log/')).toContain(`/api/log/?p=1&page_size=10&${filter}`),
    );
    await waitFor(() => expect(urls(calls, '/api/log/stat')).toContain(`/api/log/stat?${filter}`));
  });

  it('expands a row into its details; an admin sees the channel and the attempt timeline', async () => {
    setUp();
    renderApp('/log');
    const row = await screen.findByRole('row', { name: 'log 11' });
    await userEvent.click(within(row).getByRole('button', { name: '展开详情' }));
    const details = screen.getByRole('row', { name: '日志详情' });
    const fact = (label: string) =>
      within(details).getByText(label).closest('div')?.querySelector('dd')?.textContent;
    expect(fact('渠道信息')).toBe('#3 openai-main');
    expect(fact('模型倍率')).toBe('2.5');
    expect(fact('补全倍率')).toBe('4');
    expect(fact('分组倍率')).toBe('1.5');
    expect(fact('缓存 Tokens')).toBe('64');
    expect(fact('缓存倍率')).toBe('0.5');
    expect(fact('首字时间')).toBe('3.00 s');
    expect(fact('请求并计费模型')).toBe('gpt-4o');
    expect(fact('实际模型')).toBe('gpt-4o-2024-08-06');
    const timeline = within(details).getByRole('region', { name: '尝试记录' });
    const steps = within(timeline).getAllByRole('listitem');
    expect(steps).toHaveLength(2);
    expect(steps[0]?.textContent).toContain('#5');
    expect(steps[0]?.textContent).toContain('状态 502');
    expect(steps[0]?.textContent).toContain('340 ms');
    expect(steps[0]?.textContent).toContain('上游服务错误');
    expect(steps[1]?.textContent).toContain('1200 ms');
    expect(steps[0]?.getAttribute('data-outcome')).toBe('failed');
    expect(steps[1]?.getAttribute('data-outcome')).toBe('ok');

    await userEvent.click(within(row).getByRole('button', { name: '收起详情' }));
    expect(screen.queryByRole('row', { name: '日志详情' })).toBeNull();
  });

  it("a user's details leave out the channel and the attempt timeline", async () => {
    setUp(alice);
    renderApp('/log');
    const row = await screen.findByRole('row', { name: 'log 11' });
    await userEvent.click(within(row).getByRole('button', { name: '展开详情' }));
    const details = screen.getByRole('row', { name: '日志详情' });
    expect(within(details).getByText('模型倍率')).toBeTruthy();
    expect(within(details).queryByText('渠道信息')).toBeNull();
    expect(within(details).queryByRole('region', { name: '尝试记录' })).toBeNull();
  });

  it('colours use time (<101 s, <300 s) and first-response time (<3 s, <10 s)', async () => {
    setUp();
    renderApp('/log');
    await screen.findByRole('row', { name: 'log 11' });
    const speed = (id: number, of: string) =>
      screen
        .getByRole('row', { name: `log ${id}` })
        .querySelector(`[data-tone-of="${of}"]`)
        ?.getAttribute('data-speed');
    expect(speed(11, 'use-time')).toBe('green');
    expect(speed(13, 'use-time')).toBe('yellow');
    expect(speed(12, 'use-time')).toBe('red');
    expect(speed(11, 'frt')).toBe('green');
    expect(speed(13, 'frt')).toBe('yellow');
    expect(speed(12, 'frt')).toBe('red');
  });

  it('keeps column settings and the page size locally', async () => {
    const calls = setUp();
    renderApp('/log');
    await screen.findByRole('row', { name: 'log 11' });
    await userEvent.click(screen.getByRole('button', { name: '列设置' }));
    const dialog = await screen.findByRole('dialog');
    await userEvent.click(within(dialog).getByRole('checkbox', { name: '令牌' }));
    expect(headers()).not.toContain('令牌');
    expect(JSON.parse(localStorage.getItem(columnStorageKeys.logs) ?? '{}')).toMatchObject({
      token: false,
      channel: true,
    });
    await userEvent.click(within(dialog).getByRole('button', { name: '完成' }));

    await userEvent.selectOptions(screen.getByLabelText('每页条数'), '50');
    await waitFor(() =>
      expect(urls(calls, '/api/log/').some((u) => u.includes('page_size=50'))).toBe(true),
    );
    expect(localStorage.getItem('page-size')).toBe('50');
  });

  it('a user cannot turn on the admin columns, even from stored settings', async () => {
    localStorage.setItem(columnStorageKeys.logs, JSON.stringify({ channel: true, retry: true }));
    setUp(alice);
    renderApp('/log');
    await screen.findByRole('row', { name: 'log 11' });
    expect(headers()).not.toContain('渠道');
    await userEvent.click(screen.getByRole('button', { name: '列设置' }));
    const dialog = await screen.findByRole('dialog');
    expect(within(dialog).getByRole('checkbox', { name: '渠道' })).toHaveProperty('disabled', true);
    expect(within(dialog).getByRole('checkbox', { name: '用户' })).toHaveProperty('checked', false);
  });

  it("an admin clicks a username to see that user's quota and requests", async () => {
    const calls = setUp(root, {
      'GET /api/user/2': ok({
        id: 2,
        username: 'alice',
        quota: 2_000_000,
        used_quota: 750_000,
        request_count: 31,
      }),
    });
    renderApp('/log');
    const row = await screen.findByRole('row', { name: 'log 11' });
    await userEvent.click(within(row).getByRole('button', { name: '查看用户 alice 的信息' }));
    const popover = await screen.findByRole('dialog', { name: '用户信息' });
    expect(await within(popover).findByText('$4.00')).toBeTruthy();
    expect(within(popover).getByText('$1.50')).toBeTruthy();
    expect(within(popover).getByText('31')).toBeTruthy();
    expect(calls.some((c) => c.url === '/api/user/2')).toBe(true);
  });

  it('pages through the total', async () => {
    const calls = setUp();
    renderApp('/log');
    await screen.findByRole('row', { name: 'log 11' });
    expect(screen.getByText('共 42 条')).toBeTruthy();
    await userEvent.click(screen.getByRole('button', { name: '下一页' }));
    await waitFor(() =>
      expect(urls(calls, '/api/log/').some((u) => u.startsWith('/api/log/?p=2&'))).toBe(true),
    );
  });

  it('says "about" when the total is an estimate', async () => {
    setUp(root, {
      'GET /api/log/': ok({
        items: [streamed],
        page: 1,
        page_size: 10,
        total: 10_000,
        total_exact: false,
      }),
    });
    renderApp('/log');
    expect(await screen.findByText('共约 10000 条')).toBeTruthy();
  });

  it('says "about" when the stat quota is an estimate', async () => {
    setUp(root, {
      'GET /api/log/stat': ok({ quota: 1_750_000, quota_exact: false, rpm: 7, tpm: 1234 }),
    });
    renderApp('/log');
    const quota = await screen.findByText('约 $3.50');
    expect(quota.closest('[data-stat]')?.getAttribute('data-stat')).toBe('quota');
  });
});
