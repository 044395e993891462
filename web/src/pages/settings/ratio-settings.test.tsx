import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';

import { useSession } from '@/stores/session';
import { mockApi, statusData } from '@/test/api-mock';
import type { MockAnswer } from '@/test/api-mock';
import { renderApp } from '@/test/render-app';
import { makeUser } from '@/test/users';

const root = makeUser({ id: 1, username: 'root', role: 100 });
const ok = (data: unknown = null) => ({ body: { success: true, message: '', data } });
const options: Record<string, string> = {
  GroupRatio: '{"default":1}',
  UserUsableGroups: '{"default":"默认分组"}',
  ModelRequestRateLimitGroup: '{}',
  DataExportDefaultTime: 'hour',
  ModelRatio: '{"gpt-4o":1.25,"model-a":2}',
  CompletionRatio: '{"gpt-4o":4}',
  CacheRatio: '{}',
  ModelPrice: '{"mj_imagine":0.1}',
};
const pricingRow = (name: string, priced: boolean) => ({
  model_name: name,
  quota_type: 0,
  model_ratio: priced ? 1 : 0,
  completion_ratio: 1,
  model_price: 0,
  enable_groups: ['default'],
  model_description: '',
  price_set: priced,
});

function setUp(extra: Record<string, MockAnswer> = {}) {
  useSession.getState().setUser(root);
  return mockApi({
    'GET /api/status': { body: statusData() },
    'GET /api/option/': ok(Object.entries(options).map(([key, value]) => ({ key, value }))),
    'PUT /api/option/': ok(),
    'GET /api/log/delete_progress': ok({ running: false }),
    'GET /api/pricing': {
      body: {
        success: true,
        message: '',
        data: [
          pricingRow('gpt-4o', true),
          pricingRow('new-model', false),
          pricingRow('x-2', false),
        ],
        group_ratio: { default: 1 },
        usable_group: { default: '默认分组' },
      },
    },
    ...extra,
  });
}

afterEach(() => useSession.getState().clearUser());

async function openRatioTab(name: string) {
  renderApp('/setting');
  await userEvent.click(await screen.findByRole('tab', { name }));
}

const puts = (calls: ReturnType<typeof setUp>) =>
  Object.fromEntries(
    calls
      .filter((c) => c.method === 'PUT')
      .map((c) => {
        const { key, value } = c.body as { key: string; value: string };
        return [key, JSON.parse(value) as unknown];
      }),
  );

describe('visual ratio editor', () => {
  it('lists the priced models, searches, and saves an added, an edited and a deleted row', async () => {
    const calls = setUp();
    await openRatioTab('可视化倍率设置');
    const editor = await screen.findByRole('region', { name: '可视化倍率设置' });
    const table = within(editor).getByRole('table');
    const names = () =>
      within(table)
        .queryAllByRole('row')
        .slice(1)
        .map((r) => r.getAttribute('data-model'));
    expect(names()).toEqual(['gpt-4o', 'mj_imagine', 'model-a']);
    const gpt = within(table).getByRole('row', { name: /gpt-4o/ });
    expect(within(gpt).getByText('1.25')).toBeTruthy();
    expect(within(gpt).getByText('4')).toBeTruthy();
    expect(within(table).getByRole('row', { name: /mj_imagine/ }).textContent).toContain('$0.1');

    await userEvent.type(within(editor).getByRole('searchbox', { name: '搜索模型名称' }), 'mj');
    expect(names()).toEqual(['mj_imagine']);
    await userEvent.clear(within(editor).getByRole('searchbox', { name: '搜索模型名称' }));

    // Add a row: a duplicate name is refused, then a per-token price converts to ratios.
    await userEvent.click(within(editor).getByRole('button', { name: '添加模型' }));
    let dialog = await screen.findByRole('dialog');
    await userEvent.type(within(dialog).getByLabelText('模型名称'), 'model-a');
    await userEvent.type(within(dialog).getByLabelText('模型倍率'), '3');
    await userEvent.click(within(dialog).getByRole('button', { name: '确定' }));
    expect(await within(dialog).findByText('模型名称已存在')).toBeTruthy();
    await userEvent.clear(within(dialog).getByLabelText('模型名称'));
    await userEvent.type(within(dialog).getByLabelText('模型名称'), 'claude-x');
    await userEvent.selectOptions(within(dialog).getByLabelText('计费方式'), '按量计费（价格）');
    await userEvent.type(within(dialog).getByLabelText('输入价格（美元 / 1M tokens）'), '3');
    await userEvent.type(within(dialog).getByLabelText('输出价格（美元 / 1M tokens）'), 'abc');
    await userEvent.click(within(dialog).getByRole('button', { name: '确定' }));
    expect(await within(dialog).findByText('请输入数字')).toBeTruthy();
    await userEvent.clear(within(dialog).getByLabelText('输出价格（美元 / 1M tokens）'));
    await userEvent.type(within(dialog).getByLabelText('输出价格（美元 / 1M tokens）'), '15');
    await userEvent.click(within(dialog).getByRole('button', { name: '确定' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(names()).toEqual(['claude-x', 'gpt-4o', 'mj_imagine', 'model-a']);
    expect(within(editor).getByText('有未保存的更改')).toBeTruthy();

    // Edit: model-a becomes per call (its ratio is cleared).
    await userEvent.click(within(editor).getByRole('button', { name: '编辑 model-a' }));
    dialog = await screen.findByRole('dialog');
    expect(within(dialog).getByRole('heading', { name: '编辑模型 model-a' })).toBeTruthy();
    await userEvent.selectOptions(within(dialog).getByLabelText('计费方式'), '按次计费');
    await userEvent.type(within(dialog).getByLabelText('固定价格（美元 / 次）'), '0.05');
    await userEvent.click(within(dialog).getByRole('button', { name: '确定' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());

    // Delete gpt-4o, then save: only the changed options are written.
    await userEvent.click(within(editor).getByRole('button', { name: '删除 gpt-4o' }));
    expect(calls.some((c) => c.method === 'PUT')).toBe(false);
    await userEvent.click(within(editor).getByRole('button', { name: '应用更改' }));
    await waitFor(() => expect(Object.keys(puts(calls)).sort()).toHaveLength(3));
    expect(puts(calls)).toEqual({
      ModelRatio: { 'claude-x': 1.5 },
      CompletionRatio: { 'claude-x': 5 },
      ModelPrice: { mj_imagine: 0.1, 'model-a': 0.05 },
    });
    expect(await screen.findByText('保存成功')).toBeTruthy();
  });

  it('says so when nothing changed', async () => {
    const calls = setUp();
    await openRatioTab('可视化倍率设置');
    const editor = await screen.findByRole('region', { name: '可视化倍率设置' });
    await userEvent.click(within(editor).getByRole('button', { name: '应用更改' }));
    expect(await screen.findByText('你似乎并没有修改什么')).toBeTruthy();
    expect(calls.some((c) => c.method === 'PUT')).toBe(false);
  });
});

describe('models without a ratio', () => {
  it('lists the served models without a price and prices one in one step', async () => {
    const calls = setUp();
    await openRatioTab('未设置倍率模型');
    const view = await screen.findByRole('region', { name: '未设置倍率模型' });
    const table = await within(view).findByRole('table');
    await within(table).findByRole('row', { name: /new-model/ });
    expect(
      within(table)
        .getAllByRole('row')
        .slice(1)
        .map((r) => r.getAttribute('data-model')),
    ).toEqual(['new-model', 'x-2']);

    await userEvent.click(within(table).getByRole('button', { name: '设置 new-model 的价格' }));
    const dialog = await screen.findByRole('dialog');
    expect(within(dialog).queryByLabelText('模型名称')).toBeNull();
    await userEvent.type(within(dialog).getByLabelText('模型倍率'), '2');
    await userEvent.type(within(dialog).getByLabelText('补全倍率'), '3');
    await userEvent.click(within(dialog).getByRole('button', { name: '确定' }));
    await waitFor(() => expect(puts(calls).ModelRatio).toBeDefined());
    // The existing overrides are kept; only the new model is added.
    expect(puts(calls)).toEqual({
      ModelRatio: { 'gpt-4o': 1.25, 'model-a': 2, 'new-model': 2 },
      CompletionRatio: { 'gpt-4o': 4, 'new-model': 3 },
    });
  });

  it('prices a selection at once, and needs a selection', async () => {
    const calls = setUp();
    await openRatioTab('未设置倍率模型');
    const view = await screen.findByRole('region', { name: '未设置倍率模型' });
    await within(view).findByRole('row', { name: /new-model/ });
    await userEvent.click(within(view).getByRole('button', { name: '批量设置（0）' }));
    expect(await screen.findByText('请先选择模型')).toBeTruthy();

    await userEvent.click(within(view).getByRole('checkbox', { name: '选择本页全部模型' }));
    await userEvent.click(within(view).getByRole('button', { name: '批量设置（2）' }));
    const dialog = await screen.findByRole('dialog');
    expect(within(dialog).getByText(/new-model, x-2/)).toBeTruthy();
    await userEvent.selectOptions(within(dialog).getByLabelText('计费方式'), '按次计费');
    await userEvent.type(within(dialog).getByLabelText('固定价格（美元 / 次）'), '0.01');
    await userEvent.click(within(dialog).getByRole('button', { name: '确定' }));
    await waitFor(() => expect(puts(calls).ModelPrice).toBeDefined());
    expect(puts(calls)).toEqual({
      ModelPrice: { mj_imagine: 0.1, 'new-model': 0.01, 'x-2': 0.01 },
    });
  });
});
