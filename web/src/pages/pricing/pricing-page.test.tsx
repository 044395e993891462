import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';

import { pricingModelSchema } from '@/api/pricing';
import { mockApi, statusData } from '@/test/api-mock';
import { renderApp } from '@/test/render-app';

import { formatPrice, modelPrice, providerOf } from './prices';

const model = (fields: { model_name: string } & Record<string, unknown>) =>
  pricingModelSchema.parse({ enable_groups: ['default'], ...fields });

const gpt = model({
  model_name: 'gpt-4o',
  model_ratio: 1.25,
  completion_ratio: 4,
  enable_groups: ['default', 'vip'],
  model_description: 'Flagship',
});
const claude = model({ model_name: 'claude-3-haiku', model_ratio: 0.125, completion_ratio: 5 });
const image = model({ model_name: 'dall-e-3', quota_type: 1, model_price: 0.04 });
const local = model({ model_name: 'my-local', price_set: false });
const vipOnly = model({ model_name: 'deepseek-chat', model_ratio: 0.135, enable_groups: ['vip'] });

function setUp() {
  return mockApi({
    'GET /api/status': { body: statusData({ price: 7 }) },
    'GET /api/pricing': {
      body: {
        success: true,
        message: '',
        data: [gpt, claude, image, local, vipOnly],
        group_ratio: { default: 1, vip: 2 },
        usable_group: { default: '默认分组', vip: 'VIP 分组' },
      },
    },
  });
}

afterEach(() => vi.unstubAllGlobals());

describe('price arithmetic (spec 02 §9)', () => {
  it('per 1M tokens is ratio × 2 × group ratio, completion × completion ratio', () => {
    expect(modelPrice(gpt, 1)).toEqual({ kind: 'tokens', input: 2.5, output: 10 });
    expect(modelPrice(gpt, 2)).toEqual({ kind: 'tokens', input: 5, output: 20 });
  });

  it('per call is model_price × group ratio; an unpriced model has none', () => {
    expect(modelPrice(image, 1.5)).toEqual({ kind: 'call', perCall: 0.06 });
    expect(modelPrice(local, 1)).toEqual({ kind: 'unset' });
  });

  it('CNY multiplies by the price ratio', () => {
    expect(formatPrice(2.5, 'USD', 7.3)).toBe('$2.50');
    expect(formatPrice(2.5, 'CNY', 7.3)).toBe('¥18.25');
    expect(formatPrice(0.0375, 'USD', 7)).toBe('$0.0375');
  });

  it('assigns providers by name prefix', () => {
    expect(providerOf('gpt-4o')).toBe('openai');
    expect(providerOf('Claude-3-opus')).toBe('anthropic');
    expect(providerOf('qwen-max')).toBe('qwen');
    expect(providerOf('my-local')).toBe('other');
  });
});

describe('/pricing', () => {
  it('is public and shows the default group in CNY by default', async () => {
    setUp();
    renderApp('/pricing');
    expect(await screen.findByRole('heading', { name: '模型价格' })).toBeTruthy();
    const row = await screen.findByRole('row', { name: 'gpt-4o' });
    expect(within(row).getByText('按量计费')).toBeTruthy();
    expect(within(row).getByText('Flagship')).toBeTruthy();
    expect(within(row).getByText('提示 ¥17.50 / 1M tokens')).toBeTruthy();
    expect(within(row).getByText('补全 ¥70.00 / 1M tokens')).toBeTruthy();
    const call = screen.getByRole('row', { name: 'dall-e-3' });
    expect(within(call).getByText('按次计费')).toBeTruthy();
    expect(within(call).getByText('¥0.28 / 次')).toBeTruthy();
    expect(
      within(screen.getByRole('row', { name: 'my-local' })).getByText('未设置价格'),
    ).toBeTruthy();
    expect(screen.queryByRole('row', { name: 'deepseek-chat' })).toBeNull();
    expect(screen.getByLabelText('分组')).toHaveProperty('value', 'default');
  });

  it('switches currency, group and ratio columns', async () => {
    setUp();
    renderApp('/pricing');
    await screen.findByRole('row', { name: 'gpt-4o' });
    await userEvent.selectOptions(screen.getByLabelText('货币'), 'USD');
    expect(
      within(screen.getByRole('row', { name: 'gpt-4o' })).getByText('提示 $2.50 / 1M tokens'),
    ).toBeTruthy();
    await userEvent.selectOptions(screen.getByLabelText('分组'), 'vip');
    const row = screen.getByRole('row', { name: 'gpt-4o' });
    expect(within(row).getByText('提示 $5.00 / 1M tokens')).toBeTruthy();
    expect(within(row).getByText('补全 $20.00 / 1M tokens')).toBeTruthy();
    expect(screen.getByRole('row', { name: 'deepseek-chat' })).toBeTruthy();
    expect(screen.queryByRole('row', { name: 'claude-3-haiku' })).toBeNull();

    expect(screen.queryByText('模型倍率：1.25')).toBeNull();
    await userEvent.click(screen.getByRole('switch', { name: '显示倍率' }));
    expect(within(row).getByText('模型倍率：1.25')).toBeTruthy();
    expect(within(row).getByText('补全倍率：4')).toBeTruthy();
    expect(within(row).getByText('分组倍率：2')).toBeTruthy();
  });

  it('filters by provider and search text', async () => {
    setUp();
    renderApp('/pricing');
    await screen.findByRole('row', { name: 'gpt-4o' });
    const bar = screen.getByRole('group', { name: '供应商' });
    expect(
      within(bar)
        .getAllByRole('button')
        .map((b) => b.textContent),
    ).toEqual(['全部（4）', 'OpenAI（2）', 'Anthropic（1）', '其他（1）']);
    await userEvent.click(within(bar).getByRole('button', { name: 'Anthropic（1）' }));
    expect(screen.getByRole('row', { name: 'claude-3-haiku' })).toBeTruthy();
    expect(screen.queryByRole('row', { name: 'gpt-4o' })).toBeNull();
    await userEvent.click(within(bar).getByRole('button', { name: '全部（4）' }));
    await userEvent.type(screen.getByLabelText('搜索模型名称或描述'), 'flag');
    expect(screen.getByRole('row', { name: 'gpt-4o' })).toBeTruthy();
    expect(screen.queryByRole('row', { name: 'dall-e-3' })).toBeNull();
  });

  it('pages through the models', async () => {
    mockApi({
      'GET /api/status': { body: statusData() },
      'GET /api/pricing': {
        body: {
          success: true,
          data: Array.from({ length: 23 }, (_, i) => model({ model_name: `m-${i}` })),
          group_ratio: {},
          usable_group: {},
        },
      },
    });
    renderApp('/pricing');
    await screen.findByRole('row', { name: 'm-0' });
    expect(screen.getByText('共 23 条')).toBeTruthy();
    expect(screen.queryByRole('row', { name: 'm-10' })).toBeNull();
    await userEvent.click(screen.getByRole('button', { name: '下一页' }));
    expect(await screen.findByRole('row', { name: 'm-10' })).toBeTruthy();
    await userEvent.selectOptions(screen.getByLabelText('每页条数'), '50');
    expect(screen.getByRole('row', { name: 'm-22' })).toBeTruthy();
  });

  it('shows cards with the mobile page sizes on a phone', async () => {
    vi.stubGlobal(
      'matchMedia',
      vi.fn(() => ({
        matches: true,
        addEventListener: vi.fn(),
        removeEventListener: vi.fn(),
      })),
    );
    setUp();
    renderApp('/pricing');
    const card = await screen.findByRole('listitem', { name: 'gpt-4o' });
    expect(within(card).getByText('提示 ¥17.50 / 1M tokens')).toBeTruthy();
    expect(screen.queryByRole('table')).toBeNull();
    const sizes = within(screen.getByLabelText('每页条数'))
      .getAllByRole('option')
      .map((o) => o.getAttribute('value'));
    expect(sizes).toEqual(['5', '10', '20', '50']);
  });

  it('opens the quick-integration drawer for a model', async () => {
    setUp();
    renderApp('/pricing');
    const row = await screen.findByRole('row', { name: 'claude-3-haiku' });
    await userEvent.click(within(row).getByRole('button', { name: '接入示例' }));
    const drawer = await screen.findByRole('dialog', { name: 'API 接入指南' });
    expect(
      within(drawer).getByText(/"model": "claude-3-haiku"|model="claude-3-haiku"/),
    ).toBeTruthy();
  });

  it('says when the prices cannot be loaded', async () => {
    mockApi({ 'GET /api/status': { body: statusData() } });
    renderApp('/pricing');
    await waitFor(() => expect(screen.getByText('获取模型价格失败')).toBeTruthy());
  });
});
