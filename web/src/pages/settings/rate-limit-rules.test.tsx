import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';

import { useSession } from '@/stores/session';
import { mockApi, statusData } from '@/test/api-mock';
import type { MockAnswer } from '@/test/api-mock';
import { renderApp } from '@/test/render-app';
import { makeUser } from '@/test/users';

import { emptyRule, parseRules, ruleProblems, rulesText } from './rate-limit-rules';

const root = makeUser({ id: 1, username: 'root', role: 100 });
const ok = (data: unknown = null) => ({ body: { success: true, message: '', data } });

function setUp(options: Record<string, string>, extra: Record<string, MockAnswer> = {}) {
  useSession.getState().setUser(root);
  return mockApi({
    'GET /api/status': { body: statusData() },
    'GET /api/group/': ok(['default', 'free', 'vip']),
    'GET /api/option/': ok(Object.entries(options).map(([key, value]) => ({ key, value }))),
    'PUT /api/option/': ok(),
    ...extra,
  });
}

afterEach(() => useSession.getState().clearUser());

describe('RateLimitRules rows', () => {
  it('reads the stored list and writes it back without empty names and zeros', () => {
    const text =
      '[{"group":"free","rpm_limit":60},{"model":"gpt-4o","concurrency_limit":2,"queue":5,"queue_timeout_ms":1000}]';
    const rows = parseRules(text);
    expect(rows).toHaveLength(2);
    expect(rows?.[0]).toEqual({ ...emptyRule(), group: 'free', rpm_limit: 60 });
    expect(rulesText(rows ?? [])).toBe(text);
    expect(parseRules('')).toEqual([]);
    expect(parseRules('{}')).toBeNull();
    expect(parseRules('[{"group":1}]')).toBeNull();
    expect(parseRules('[{"rpm_limit":"1"}]')).toBeNull();
    expect(rulesText([{ ...emptyRule(), group: ' vip ', model: ' ', tpm_limit: 5 }])).toBe(
      '[{"group":"vip","tpm_limit":5}]',
    );
  });

  it('says every problem with its rule number, as the server would', () => {
    const rule = (patch: Partial<ReturnType<typeof emptyRule>>) => ({
      ...emptyRule(),
      rpm_limit: 1,
      ...patch,
    });
    expect(ruleProblems([rule({ group: 'a' }), rule({ model: 'm' })])).toEqual([]);
    expect(
      ruleProblems([
        rule({ group: 'a' }),
        rule({ group: ' ' }),
        rule({ group: 'b', rpm_limit: 0 }),
        rule({ group: 'a ', tpm_limit: 3 }),
        rule({ model: 'm', queue: 3 }),
        rule({ model: 'n', queue: 3, queue_timeout_ms: 600_001 }),
        rule({ model: 'o', rpd_limit: -1 }),
        rule({ model: 'p', rpd_limit: Number.NaN }),
        rule({ model: 'q', queue: 10_000, queue_timeout_ms: 600_000 }),
      ]),
    ).toEqual([
      { rule: 2, kind: 'target' },
      { rule: 3, kind: 'noLimit' },
      { rule: 4, kind: 'duplicate', other: 1 },
      { rule: 5, kind: 'queue' },
      { rule: 6, kind: 'queue' },
      { rule: 7, kind: 'number' },
      { rule: 8, kind: 'number' },
    ]);
    expect(ruleProblems(Array.from({ length: 1001 }, (_, i) => rule({ model: `m${i}` })))).toEqual([
      { rule: 0, kind: 'tooMany' },
    ]);
  });
});

describe('rules editor in the rate-limit tab', () => {
  it('edits the stored rules as rows, says what is wrong, and saves the option', async () => {
    const calls = setUp({ RateLimitRules: '[{"group":"free","rpm_limit":60}]' });
    renderApp('/setting?tab=ratelimit');
    const user = userEvent.setup();
    const card = await screen.findByRole('region', { name: '分组与模型限流规则' });
    const first = within(card).getByRole('group', { name: '规则 1' });
    expect(within(first).getByLabelText('分组')).toHaveProperty('value', 'free');
    expect(within(first).getByLabelText('每分钟最多请求数（RPM）')).toHaveProperty('value', '60');

    await user.click(within(card).getByRole('button', { name: '添加规则' }));
    await user.click(within(card).getByRole('button', { name: '保存限流规则' }));
    const problems = await within(card).findByRole('alert');
    expect(within(problems).getByText('第 2 条规则既没有指定分组也没有指定模型')).toBeTruthy();
    expect(within(problems).getByText('第 2 条规则没有设置任何限制')).toBeTruthy();
    expect(calls.filter((c) => c.method === 'PUT')).toHaveLength(0);

    const second = within(card).getByRole('group', { name: '规则 2' });
    await user.type(within(second).getByLabelText('分组'), 'free');
    await user.type(within(second).getByLabelText('最多排队请求数'), '5');
    await user.type(within(second).getByLabelText('最大并发请求数'), '2');
    expect(within(card).getByText('第 2 条规则与第 1 条的分组和模型相同')).toBeTruthy();
    expect(
      within(card).getByText(
        '第 2 条规则：队列可容纳 1 到 10000 个请求，每个等待 1 到 600000 毫秒；不排队时两者都填 0',
      ),
    ).toBeTruthy();
    await user.type(within(second).getByLabelText('模型'), 'gpt-4o');
    await user.type(within(second).getByLabelText('最长排队时间（毫秒）'), '3000');
    expect(within(card).queryByRole('alert')).toBeNull();

    await user.click(within(card).getByRole('button', { name: '删除规则 1' }));
    await user.click(within(card).getByRole('button', { name: '保存限流规则' }));
    expect(await screen.findByText('限流规则已保存！')).toBeTruthy();
    await waitFor(() =>
      expect(calls.find((c) => c.method === 'PUT')?.body).toEqual({
        key: 'RateLimitRules',
        value:
          '[{"group":"free","model":"gpt-4o","concurrency_limit":2,"queue":5,"queue_timeout_ms":3000}]',
      }),
    );
  });

  it('says when the stored text is not a list of rules and starts from no rules', async () => {
    setUp({ RateLimitRules: '{"free": 60}' });
    renderApp('/setting?tab=ratelimit');
    const card = await screen.findByRole('region', { name: '分组与模型限流规则' });
    expect(within(card).getByText(/不是规则列表/)).toBeTruthy();
    expect(within(card).getByText('{"free": 60}')).toBeTruthy();
    expect(within(card).getByText('尚未设置规则')).toBeTruthy();
  });

  it('offers the sticky routing options in the same tab', async () => {
    const calls = setUp({ StickyRoutingMaxEntries: '100000', StickyRoutingTtlSeconds: '3600' });
    renderApp('/setting?tab=ratelimit');
    const card = await screen.findByRole('region', { name: '粘性路由（提示词缓存）' });
    const ttl = within(card).getByLabelText('会话保持时间（秒）');
    expect(ttl).toHaveProperty('value', '3600');
    await userEvent.clear(ttl);
    await userEvent.type(ttl, '600');
    await userEvent.click(within(card).getByRole('button', { name: /保存/ }));
    await waitFor(() =>
      expect(calls.find((c) => c.method === 'PUT')?.body).toEqual({
        key: 'StickyRoutingTtlSeconds',
        value: '600',
      }),
    );
  });
});
