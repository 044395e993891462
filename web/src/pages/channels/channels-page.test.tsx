import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';

import { channelSchema } from '@/api/channels';
import { usePreferences } from '@/stores/preferences';
import { useSession } from '@/stores/session';
import { mockApi, statusData } from '@/test/api-mock';
import type { MockAnswer, RecordedCall } from '@/test/api-mock';
import { renderApp } from '@/test/render-app';
import { makeUser } from '@/test/users';

const root = makeUser({ id: 1, username: 'root', role: 100 });

const makeChannel = (fields: { id: number; name: string } & Record<string, unknown>) =>
  channelSchema.parse(fields);

const alpha = makeChannel({
  id: 1,
  name: 'alpha',
  type: 1,
  models: 'gpt-4o,gpt-4o-mini',
  group: 'default,vip',
  status: 1,
  response_time: 800,
  used_quota: 250_000,
  balance: 12.5,
  priority: 3,
  weight: 1,
});
const beta = makeChannel({
  id: 2,
  name: 'beta',
  type: 14,
  status: 2,
  response_time: 4200,
  models: 'claude',
  group: 'default',
});
const gamma = makeChannel({
  id: 3,
  name: 'gamma',
  type: 43,
  status: 3,
  response_time: 0,
  models: 'deepseek-chat',
  group: 'default',
  other_info: JSON.stringify({ status_reason: 'quota exhausted', status_time: 1_700_000_000 }),
});

const ok = (data: unknown = null, message = '') => ({ body: { success: true, message, data } });
const page = (items: unknown[], total = items.length) =>
  ok({ items, page: 1, page_size: 10, total });

function setUp(extra: Record<string, MockAnswer> = {}) {
  useSession.getState().setUser(root);
  return mockApi({
    'GET /api/status': { body: statusData({ display_in_currency: true, quota_per_unit: 500_000 }) },
    'GET /api/channel/': page([alpha, beta, gamma]),
    'GET /api/group/': ok(['default', 'vip']),
    'PUT /api/channel/': ok(alpha),
    ...extra,
  });
}

const sent = (calls: RecordedCall[], method: string, path: string) =>
  calls.filter((c) => c.method === method && c.url.split('?')[0] === path);

afterEach(() => {
  useSession.getState().clearUser();
  usePreferences.getState().setPageSize(10);
});

describe('channel list', () => {
  it('is for admins only', async () => {
    mockApi({ 'GET /api/status': { body: statusData() } });
    useSession.getState().setUser(makeUser({ id: 9, username: 'plain' }));
    const { router } = renderApp('/channel');
    await waitFor(() => expect(router.state.location.pathname).toBe('/'));
  });

  it('shows type labels, status, response time and used/remaining; non-enabled rows shaded', async () => {
    setUp();
    renderApp('/channel');
    const a = await screen.findByRole('row', { name: 'alpha' });
    expect(within(a).getByText('OpenAI')).toBeTruthy();
    expect(within(a).getByText('已启用')).toBeTruthy();
    expect(within(a).getByText('default, vip')).toBeTruthy();
    expect(within(a).getByText('0.80 秒').getAttribute('data-response')).toBe('green');
    expect(within(a).getByText('已用 $0.50')).toBeTruthy();
    expect(within(a).getByText('剩余 $12.50')).toBeTruthy();
    expect(a.getAttribute('data-state')).toBeNull();
    const b = screen.getByRole('row', { name: 'beta' });
    expect(within(b).getByText('Claude')).toBeTruthy();
    expect(within(b).getByText('已禁用')).toBeTruthy();
    expect(within(b).getByText('4.20 秒').getAttribute('data-response')).toBe('yellow');
    expect(b.getAttribute('data-state')).toBe('off');
    expect(within(b).getByRole('button', { name: '启用' })).toBeTruthy();
    const g = screen.getByRole('row', { name: 'gamma' });
    expect(within(g).getByText('未测试')).toBeTruthy();
    expect(g.getAttribute('data-state')).toBe('off');
    within(g).getByText('自动禁用').closest<HTMLElement>('.channels__status')?.focus();
    expect((await screen.findAllByText('原因：quota exhausted')).length).toBeGreaterThan(0);
  });

  it('searches by keyword, model and group, and pages with the stored page size', async () => {
    const calls = setUp({ 'GET /api/channel/search': page([alpha], 45) });
    renderApp('/channel');
    await screen.findByRole('row', { name: 'alpha' });
    const user = userEvent.setup();
    await user.type(screen.getByLabelText('搜索渠道的 ID、名称、地址或标签'), 'al');
    await user.type(screen.getByLabelText('模型关键字'), 'gpt');
    await user.selectOptions(await screen.findByRole('combobox', { name: '分组' }), 'vip');
    await user.click(screen.getByRole('button', { name: '搜索' }));
    await waitFor(() => expect(sent(calls, 'GET', '/api/channel/search')).toHaveLength(1));
    const url = new URL(sent(calls, 'GET', '/api/channel/search')[0]?.url ?? '', 'http://x');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      keyword: 'al',
      model: 'gpt',
      group: 'vip',
      p: '1',
      page_size: '10',
    });
    expect(await screen.findByText('第 1 / 5 页')).toBeTruthy();
    await user.selectOptions(screen.getByLabelText('每页条数'), '50');
    await waitFor(() =>
      expect(sent(calls, 'GET', '/api/channel/search').at(-1)?.url).toContain('page_size=50'),
    );
    expect(localStorage.getItem('page-size')).toBe('50');
  });

  it('edits priority and weight in place, refusing invalid values', async () => {
    const calls = setUp();
    renderApp('/channel');
    const user = userEvent.setup();
    const priority = await screen.findByLabelText('alpha 的优先级');
    await user.clear(priority);
    await user.type(priority, '-1000{Enter}');
    expect(await screen.findByText('优先级不能小于 -999')).toBeTruthy();
    expect(sent(calls, 'PUT', '/api/channel/')).toHaveLength(0);
    await user.clear(priority);
    await user.type(priority, '7');
    fireEvent.blur(priority);
    await waitFor(() =>
      expect(sent(calls, 'PUT', '/api/channel/')[0]?.body).toEqual({ id: 1, priority: 7 }),
    );
    const weight = screen.getByLabelText('alpha 的权重');
    await user.clear(weight);
    await user.type(weight, '1.5{Enter}');
    expect(await screen.findByText('必须是整数')).toBeTruthy();
    await user.clear(weight);
    await user.type(weight, '4{Enter}');
    await waitFor(() =>
      expect(sent(calls, 'PUT', '/api/channel/')[1]?.body).toEqual({ id: 1, weight: 4 }),
    );
  });

  it('disables and enables a channel', async () => {
    const calls = setUp();
    renderApp('/channel');
    const user = userEvent.setup();
    await user.click(
      within(await screen.findByRole('row', { name: 'alpha' })).getByRole('button', {
        name: '禁用',
      }),
    );
    await waitFor(() =>
      expect(sent(calls, 'PUT', '/api/channel/')[0]?.body).toEqual({ id: 1, status: 2 }),
    );
    expect(await screen.findByText('渠道已禁用')).toBeTruthy();
    await user.click(
      within(screen.getByRole('row', { name: 'beta' })).getByRole('button', { name: '启用' }),
    );
    await waitFor(() =>
      expect(sent(calls, 'PUT', '/api/channel/')[1]?.body).toEqual({ id: 2, status: 1 }),
    );
  });

  it('tests a channel with a model chosen from its models and shows the seconds', async () => {
    const calls = setUp({
      'GET /api/channel/test/1': { body: { success: true, message: '', time: 1.234 } },
      'GET /api/channel/test/2': { body: { success: false, message: 'upstream down', time: 0 } },
    });
    renderApp('/channel');
    const user = userEvent.setup();
    await user.click(
      within(await screen.findByRole('row', { name: 'alpha' })).getByRole('button', {
        name: '测试',
      }),
    );
    const dialog = await screen.findByRole('dialog', { name: '测试渠道 alpha' });
    const picker = within(dialog).getByRole('combobox');
    expect(
      within(picker)
        .getAllByRole('option')
        .map((o) => o.textContent),
    ).toEqual(['默认测试模型', 'gpt-4o', 'gpt-4o-mini']);
    await user.selectOptions(picker, 'gpt-4o-mini');
    await user.click(within(dialog).getByRole('button', { name: '测试' }));
    expect(await screen.findByText('渠道 alpha 测试成功，耗时 1.23 秒')).toBeTruthy();
    expect(sent(calls, 'GET', '/api/channel/test/1')[0]?.url).toBe(
      '/api/channel/test/1?model=gpt-4o-mini',
    );
    await user.click(within(dialog).getAllByRole('button', { name: '关闭' })[0] as HTMLElement);
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    await user.click(
      within(screen.getByRole('row', { name: 'beta' })).getByRole('button', { name: '测试' }),
    );
    await user.click(
      within(await screen.findByRole('dialog')).getByRole('button', { name: '测试' }),
    );
    expect(await screen.findByText('渠道 beta 测试失败：upstream down')).toBeTruthy();
  });

  it('copies and deletes (after confirming) a channel', async () => {
    const calls = setUp({
      'POST /api/channel/copy/1': ok({ id: 4 }),
      'DELETE /api/channel/2/': ok(),
    });
    renderApp('/channel');
    const user = userEvent.setup();
    await user.click(
      within(await screen.findByRole('row', { name: 'alpha' })).getByRole('button', {
        name: '复制',
      }),
    );
    expect(await screen.findByText('渠道复制成功')).toBeTruthy();
    await user.click(
      within(screen.getByRole('row', { name: 'beta' })).getByRole('button', { name: '删除' }),
    );
    const dialog = await screen.findByRole('dialog', { name: '删除渠道' });
    expect(within(dialog).getByText(/确定删除渠道 beta 吗/)).toBeTruthy();
    expect(sent(calls, 'DELETE', '/api/channel/2/')).toHaveLength(0);
    await user.click(within(dialog).getByRole('button', { name: '删除' }));
    await waitFor(() => expect(sent(calls, 'DELETE', '/api/channel/2/')).toHaveLength(1));
    expect(await screen.findByText('渠道已删除')).toBeTruthy();
  });

  it('says so when copying fails', async () => {
    setUp({ 'POST /api/channel/copy/1': { status: 500, body: { success: false, message: 'x' } } });
    renderApp('/channel');
    const user = userEvent.setup();
    await user.click(
      within(await screen.findByRole('row', { name: 'alpha' })).getByRole('button', {
        name: '复制',
      }),
    );
    expect(await screen.findByText('渠道复制失败')).toBeTruthy();
  });

  it('batch deletes the selected channels and deletes the disabled ones, with confirmations', async () => {
    const calls = setUp({
      'POST /api/channel/batch': ok(2),
      'DELETE /api/channel/disabled': ok(2),
    });
    renderApp('/channel');
    const user = userEvent.setup();
    await screen.findByRole('row', { name: 'alpha' });
    await user.click(screen.getByRole('button', { name: '删除所选渠道' }));
    expect(await screen.findByText('请先选择要删除的渠道')).toBeTruthy();
    await user.click(screen.getByRole('checkbox', { name: '选择 alpha' }));
    await user.click(screen.getByRole('checkbox', { name: '选择 gamma' }));
    expect(screen.getByText('已选择 2 个渠道')).toBeTruthy();
    await user.click(screen.getByRole('button', { name: '删除所选渠道' }));
    const dialog = await screen.findByRole('dialog', { name: '删除所选渠道' });
    await user.click(within(dialog).getByRole('button', { name: '删除' }));
    await waitFor(() =>
      expect(sent(calls, 'POST', '/api/channel/batch')[0]?.body).toEqual({ ids: [1, 3] }),
    );
    expect(await screen.findByText('已删除 2 个渠道')).toBeTruthy();
    await user.click(screen.getByRole('button', { name: '删除禁用渠道' }));
    const second = await screen.findByRole('dialog', { name: '删除禁用渠道' });
    await user.click(within(second).getByRole('button', { name: '删除' }));
    await waitFor(() => expect(sent(calls, 'DELETE', '/api/channel/disabled')).toHaveLength(1));
  });

  it('hides columns from the column settings and remembers them', async () => {
    setUp();
    renderApp('/channel');
    const user = userEvent.setup();
    await screen.findByRole('row', { name: 'alpha' });
    expect(screen.getByRole('columnheader', { name: '响应时间' })).toBeTruthy();
    await user.click(screen.getByRole('button', { name: '列设置' }));
    const dialog = await screen.findByRole('dialog', { name: '列设置' });
    await user.click(within(dialog).getByRole('checkbox', { name: '响应时间' }));
    expect(screen.queryByRole('columnheader', { name: '响应时间' })).toBeNull();
    expect(JSON.parse(localStorage.getItem('channels-table-columns') ?? '{}')).toMatchObject({
      responseTime: false,
      name: true,
    });
  });

  it('sets the tag of selected channels (needs a non-empty tag)', async () => {
    const calls = setUp({ 'POST /api/channel/batch/tag': ok() });
    renderApp('/channel');
    const user = userEvent.setup();
    await screen.findByRole('row', { name: 'alpha' });
    await user.click(screen.getByRole('button', { name: '批量设置标签' }));
    expect(await screen.findByText('请选择需要设置标签的渠道')).toBeTruthy();
    await user.click(screen.getByRole('checkbox', { name: '选择 beta' }));
    await user.click(screen.getByRole('button', { name: '批量设置标签' }));
    const dialog = await screen.findByRole('dialog', { name: '批量设置标签' });
    await user.click(within(dialog).getByRole('button', { name: '设置' }));
    expect(await within(dialog).findByText('标签不能为空')).toBeTruthy();
    await user.type(within(dialog).getByLabelText('标签'), 'team');
    await user.click(within(dialog).getByRole('button', { name: '设置' }));
    await waitFor(() =>
      expect(sent(calls, 'POST', '/api/channel/batch/tag')[0]?.body).toEqual({
        ids: [2],
        tag: 'team',
      }),
    );
    expect(await screen.findByText('标签更新成功')).toBeTruthy();
  });
});

describe('tag aggregation mode', () => {
  const t1 = makeChannel({ id: 5, name: 't1', tag: 'crew', status: 2, priority: 2, weight: 3 });
  const t2 = makeChannel({ id: 6, name: 't2', tag: 'crew', status: 1, priority: 2, weight: 4 });

  it('groups tagged channels under a parent row and acts on the tag', async () => {
    const calls = setUp({
      'GET /api/channel/': ({ url }) =>
        url.includes('tag_mode=true') ? page([t1, alpha, t2], 2) : page([alpha, t1, t2]),
      'POST /api/channel/tag/disabled': ok(2),
      'PUT /api/channel/tag': ok(2),
    });
    renderApp('/channel');
    const user = userEvent.setup();
    await screen.findByRole('row', { name: 'alpha' });
    await user.click(screen.getByRole('switch', { name: '标签聚合模式' }));
    const parent = await screen.findByRole('row', { name: 'tag crew' });
    expect(within(parent).getByText('2 个渠道')).toBeTruthy();
    // enabled when any child is; priority shown (all agree), weight not (they differ)
    expect(within(parent).getByText('已启用')).toBeTruthy();
    const cells = within(parent).getAllByRole('cell');
    const headers = screen.getAllByRole('columnheader').map((h) => h.textContent);
    expect(within(cells[headers.indexOf('优先级')] as HTMLElement).getByRole('spinbutton')).toBe(
      screen.getByLabelText('标签 crew 的优先级'),
    );
    expect((screen.getByLabelText('标签 crew 的优先级') as HTMLInputElement).value).toBe('2');
    expect((screen.getByLabelText('标签 crew 的权重') as HTMLInputElement).value).toBe('');
    // the tag's priority and weight are set in place for all its channels (integers only)
    const tagWeight = screen.getByLabelText('标签 crew 的权重');
    await user.type(tagWeight, '-1{Enter}');
    expect(await screen.findByText('权重不能小于 0')).toBeTruthy();
    await user.type(tagWeight, '6{Enter}');
    await waitFor(() =>
      expect(sent(calls, 'PUT', '/api/channel/tag')[0]?.body).toEqual({ tag: 'crew', weight: 6 }),
    );
    expect(await screen.findByText('标签更新成功')).toBeTruthy();
    expect(screen.getByRole('row', { name: 't1' }).getAttribute('data-row')).toBe('child');

    await user.click(within(parent).getByRole('button', { name: '禁用' }));
    await waitFor(() =>
      expect(sent(calls, 'POST', '/api/channel/tag/disabled')[0]?.body).toEqual({ tag: 'crew' }),
    );

    await user.click(within(parent).getByRole('button', { name: '编辑标签' }));
    const dialog = await screen.findByRole('dialog', { name: '编辑标签 crew' });
    await user.click(within(dialog).getByRole('button', { name: '设置' }));
    expect(await within(dialog).findByText('请至少修改一项')).toBeTruthy();
    await user.type(within(dialog).getByLabelText('新标签名'), 'crew2');
    await user.type(within(dialog).getByLabelText('权重'), '5');
    await user.click(within(dialog).getByRole('button', { name: '设置' }));
    await waitFor(() =>
      expect(sent(calls, 'PUT', '/api/channel/tag')[1]?.body).toEqual({
        tag: 'crew',
        new_tag: 'crew2',
        weight: 5,
      }),
    );
    expect(sent(calls, 'GET', '/api/channel/').some((c) => c.url.includes('tag_mode=true'))).toBe(
      true,
    );
  });
});

describe('channel operations', () => {
  it('tests every channel in the background after a confirmation', async () => {
    const calls = setUp({ 'GET /api/channel/test': ok({ count: 3 }) });
    renderApp('/channel');
    const user = userEvent.setup();
    await screen.findByRole('row', { name: 'alpha' });
    await user.click(screen.getByRole('button', { name: '测试所有渠道' }));
    const dialog = await screen.findByRole('dialog', { name: '测试所有渠道' });
    expect(sent(calls, 'GET', '/api/channel/test')).toHaveLength(0);
    await user.click(within(dialog).getByRole('button', { name: '开始测试' }));
    expect(
      await screen.findByText('已开始在后台测试 3 个渠道，列表会在一分钟内自动刷新结果'),
    ).toBeTruthy();
    expect(sent(calls, 'GET', '/api/channel/test')).toHaveLength(1);
    // the list then refreshes itself (every 5 s) to show the results as they land
    const loads = sent(calls, 'GET', '/api/channel/').length;
    await waitFor(() => expect(sent(calls, 'GET', '/api/channel/').length).toBeGreaterThan(loads), {
      timeout: 8_000,
    });
  });

  it("updates one channel's balance, showing the server's message when the type has no balance API", async () => {
    const calls = setUp({
      'GET /api/channel/update_balance/1/': {
        status: 501,
        body: {
          success: false,
          message: 'balance query is not supported for OpenAI channels',
          code: 'not_implemented',
        },
      },
      'GET /api/channel/update_balance/2/': ok(3.5),
    });
    renderApp('/channel');
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: '更新 alpha 的余额' }));
    expect(
      await screen.findByText(
        '渠道 alpha 余额更新失败：balance query is not supported for OpenAI channels',
      ),
    ).toBeTruthy();
    await user.click(screen.getByRole('button', { name: '更新 beta 的余额' }));
    expect(await screen.findByText('渠道 beta 余额已更新：$3.50')).toBeTruthy();
    expect(sent(calls, 'GET', '/api/channel/update_balance/2/')).toHaveLength(1);
  });

  it('updates every balance and reports the counts (or what the server says)', async () => {
    let counts = true;
    const calls = setUp({
      'GET /api/channel/update_balance': () =>
        counts
          ? ok({ updated: 2, failed: 1, disabled: 1, skipped: 4 }, '2 balances updated')
          : ok(null, 'nothing was updated'),
    });
    renderApp('/channel');
    const user = userEvent.setup();
    await screen.findByRole('row', { name: 'alpha' });
    await user.click(screen.getByRole('button', { name: '更新所有已启用渠道余额' }));
    expect(
      await screen.findByText(
        '已更新 2 个渠道的余额，1 个失败，1 个因余额不足被禁用，4 个不支持查询已跳过',
      ),
    ).toBeTruthy();
    counts = false;
    await user.click(screen.getByRole('button', { name: '更新所有已启用渠道余额' }));
    expect(await screen.findByText('服务器提示：nothing was updated')).toBeTruthy();
    expect(sent(calls, 'GET', '/api/channel/update_balance')).toHaveLength(2);
  });

  it('repairs the ability index and reports the counts', async () => {
    const calls = setUp({
      'POST /api/channel/fix': ok({ channels: 3, abilities: 8, repaired: 2 }),
    });
    renderApp('/channel');
    const user = userEvent.setup();
    await screen.findByRole('row', { name: 'alpha' });
    await user.click(screen.getByRole('button', { name: '修复渠道能力' }));
    expect(await screen.findByText('渠道能力已修复：3 个渠道，8 条能力，修复 2 条')).toBeTruthy();
    expect(sent(calls, 'POST', '/api/channel/fix')).toHaveLength(1);
  });

  it('sorts by id when asked and remembers it', async () => {
    const calls = setUp();
    renderApp('/channel');
    const user = userEvent.setup();
    await screen.findByRole('row', { name: 'alpha' });
    expect(sent(calls, 'GET', '/api/channel/')[0]?.url).not.toContain('id_sort');
    await user.click(screen.getByRole('switch', { name: '按 ID 排序' }));
    await waitFor(() =>
      expect(sent(calls, 'GET', '/api/channel/').at(-1)?.url).toContain('id_sort=true'),
    );
    expect(localStorage.getItem('channels-id-sort')).toBe('1');
    localStorage.removeItem('channels-id-sort');
  });

  it('colours the response time per the thresholds (light green up to 3 s, yellow up to 5 s)', async () => {
    const fast = makeChannel({ id: 8, name: 'fast', response_time: 1000 });
    const mid = makeChannel({ id: 9, name: 'mid', response_time: 2500 });
    const slow = makeChannel({ id: 10, name: 'slow', response_time: 5001 });
    setUp({ 'GET /api/channel/': page([fast, mid, beta, slow]) });
    renderApp('/channel');
    const tone = async (name: string, text: string) =>
      within(await screen.findByRole('row', { name }))
        .getByText(text)
        .getAttribute('data-tone');
    expect(await tone('fast', '1.00 秒')).toBe('green');
    expect(await tone('mid', '2.50 秒')).toBe('lime');
    expect(await tone('beta', '4.20 秒')).toBe('yellow');
    expect(await tone('slow', '5.00 秒')).toBe('red');
  });

  it('shows the keys the server disabled on its own in the status tooltip', async () => {
    const multi = makeChannel({
      id: 11,
      name: 'multi',
      status: 1,
      key_count: 3,
      other_info: JSON.stringify({
        disabled_keys: [
          { index: 2, fingerprint: 'ab12', reason: 'invalid api key', time: 1_700_000_000 },
          { index: 0, fingerprint: 'cd34', reason: 'account deactivated', time: 1_700_000_100 },
        ],
      }),
    });
    setUp({ 'GET /api/channel/': page([multi, alpha]) });
    renderApp('/channel');
    const row = await screen.findByRole('row', { name: 'multi' });
    expect(within(row).getByText('已启用')).toBeTruthy();
    expect(within(row).getByText('2/3 密钥禁用')).toBeTruthy();
    within(row).getByText('已启用').closest<HTMLElement>('.channels__status')?.focus();
    expect((await screen.findAllByText('3 个密钥中有 2 个已禁用')).length).toBeGreaterThan(0);
    expect(screen.getAllByText(/^第 1 行：account deactivated（/).length).toBeGreaterThan(0);
    expect(screen.getAllByText(/^第 3 行：invalid api key（/).length).toBeGreaterThan(0);
    // a channel without disabled keys has a plain badge
    const a = screen.getByRole('row', { name: 'alpha' });
    expect(a.querySelector('.channels__status')).toBeNull();
  });
});
