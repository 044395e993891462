import { act, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';

import { useSession } from '@/stores/session';
import { mockApi, statusData } from '@/test/api-mock';
import type { MockAnswer, RecordedCall } from '@/test/api-mock';
import { channelTypesData } from '@/test/channel-types';
import { stubClipboard } from '@/test/clipboard';
import { renderApp } from '@/test/render-app';
import { makeUser } from '@/test/users';

const root = makeUser({ id: 1, username: 'root', role: 100 });
const ok = (data: unknown = null, message = '') => ({ body: { success: true, message, data } });

const stored = {
  id: 7,
  name: 'seven',
  type: 1,
  key: '',
  key_set: true,
  key_count: 3,
  base_url: 'https://up.example.com',
  models: 'gpt-4o',
  group: 'vip',
  model_mapping: '',
  priority: 2,
  weight: 5,
  auto_ban: 0,
  status: 1,
};

function setUp(extra: Record<string, MockAnswer> = {}) {
  useSession.getState().setUser(root);
  return mockApi({
    'GET /api/status': { body: statusData() },
    'GET /api/group/': ok(['default', 'vip']),
    'GET /api/channel/types': ok(channelTypesData),
    'GET /api/channel/': ok({ items: [], page: 1, page_size: 10, total: 0 }),
    'GET /api/channel/7': ok(stored),
    'GET /api/channel/7/limits': ok({
      concurrency_limit: 0,
      rpm_limit: 0,
      tpm_limit: 0,
      rpd_limit: 0,
      key_limits: [],
    }),
    ...extra,
  });
}

const sent = (calls: RecordedCall[], method: string, path: string) =>
  calls.filter((c) => c.method === method && c.url.split('?')[0] === path);

afterEach(() => useSession.getState().clearUser());

describe('channel editor', () => {
  it('creates a channel with the defaults, the cleaned base URL and a notice for Chinese commas', async () => {
    const calls = setUp({ 'POST /api/channel/': ok({ ids: [1, 2] }) });
    const { router } = renderApp('/channel/add');
    const user = userEvent.setup();
    expect(await screen.findByRole('heading', { name: '添加渠道' })).toBeTruthy();
    // The form shows once the type table has loaded.
    expect(((await screen.findByLabelText('类型')) as HTMLSelectElement).value).toBe('1');
    expect(screen.getByLabelText('代理地址').getAttribute('placeholder')).toBe(
      'https://api.openai.com',
    );
    await user.click(screen.getByRole('button', { name: '提交' }));
    expect(await screen.findByText('请填写渠道名称')).toBeTruthy();
    expect(screen.getByText('请填写渠道密钥')).toBeTruthy();
    expect(screen.getByText('请至少选择一个模型')).toBeTruthy();

    await user.type(screen.getByLabelText('名称'), 'new');
    await user.type(screen.getByLabelText('代理地址'), 'https://api.example.com/');
    await user.type(screen.getByRole('textbox', { name: '密钥' }), 'k1，k2');
    await user.click(screen.getByRole('switch', { name: '批量创建（每行密钥创建一个渠道）' }));
    await user.type(screen.getByPlaceholderText('输入模型名称'), 'gpt-4o, o3{Enter}');
    await user.type(screen.getByLabelText('模型重定向'), '{{"a":');
    await user.click(screen.getByRole('button', { name: '提交' }));
    expect(await screen.findByText('必须是合法的 JSON 对象')).toBeTruthy();
    await user.clear(screen.getByLabelText('模型重定向'));
    await user.click(screen.getByRole('button', { name: '提交' }));

    await waitFor(() => expect(sent(calls, 'POST', '/api/channel/')).toHaveLength(1));
    expect(sent(calls, 'POST', '/api/channel/')[0]?.body).toMatchObject({
      mode: 'batch',
      channel: {
        type: 1,
        name: 'new',
        base_url: 'https://api.example.com',
        key: 'k1,k2',
        models: 'gpt-4o,o3',
        group: 'default',
        auto_ban: 1,
        priority: 0,
        weight: 0,
      },
    });
    expect(await screen.findByText('密钥中的中文逗号已替换为英文逗号')).toBeTruthy();
    expect(await screen.findByText('渠道创建成功')).toBeTruthy();
    await waitFor(() => expect(router.state.location.pathname).toBe('/channel'));
  });

  it('sets the rate limits of a channel being created, saved once it has its id', async () => {
    const calls = setUp({
      'POST /api/channel/': ok({ ids: [9] }),
      'PUT /api/channel/9/limits': ok({
        concurrency_limit: 0,
        rpm_limit: 60,
        tpm_limit: 0,
        rpd_limit: 0,
        key_limits: [{ index: 1, concurrency_limit: 2, rpm_limit: 0, tpm_limit: 0, rpd_limit: 0 }],
      }),
    });
    renderApp('/channel/add');
    const user = userEvent.setup();
    expect(await screen.findByRole('heading', { name: '添加渠道' })).toBeTruthy();
    expect(await screen.findByText('这些限制在渠道创建后立即保存。')).toBeTruthy();
    await user.type(screen.getByLabelText('名称'), 'limited');
    await user.type(screen.getByRole('textbox', { name: '密钥' }), 'k1{Enter}k2');
    await user.type(screen.getByPlaceholderText('输入模型名称'), 'gpt-4o{Enter}');
    const rpm = screen.getByLabelText('每分钟最多请求数（RPM）');
    await user.clear(rpm);
    await user.type(rpm, '60');
    await user.click(screen.getByRole('button', { name: '添加密钥限制' }));
    const row = screen.getByRole('row', { name: '第 1 条' });
    const line = within(row).getByLabelText('密钥行');
    await user.clear(line);
    await user.type(line, '3');
    // Line 3 of two keys: said at once, and the channel is not created.
    expect(await screen.findByText('密钥行必须是 1 到 2 之间的整数')).toBeTruthy();
    await user.click(screen.getByRole('button', { name: '提交' }));
    expect(await screen.findByText('请先修正速率限制')).toBeTruthy();
    expect(sent(calls, 'POST', '/api/channel/')).toHaveLength(0);
    await user.clear(line);
    await user.type(line, '2');
    const concurrency = within(row).getByLabelText('最大并发请求数');
    await user.clear(concurrency);
    await user.type(concurrency, '2');
    await user.click(screen.getByRole('button', { name: '提交' }));

    await waitFor(() => expect(sent(calls, 'PUT', '/api/channel/9/limits')).toHaveLength(1));
    expect(sent(calls, 'POST', '/api/channel/')).toHaveLength(1);
    expect(sent(calls, 'PUT', '/api/channel/9/limits')[0]?.body).toEqual({
      concurrency_limit: 0,
      rpm_limit: 60,
      tpm_limit: 0,
      rpd_limit: 0,
      key_limits: [{ index: 1, concurrency_limit: 2, rpm_limit: 0, tpm_limit: 0, rpd_limit: 0 }],
    });
    expect(await screen.findByText('渠道创建成功')).toBeTruthy();
  });

  it('fetching models for a new channel needs a key, then posts base_url, type and key', async () => {
    const calls = setUp({ 'POST /api/channel/fetch_models': ok(['m1', 'm2']) });
    renderApp('/channel/add');
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: '获取模型列表' }));
    expect(await screen.findByText('请先填写密钥')).toBeTruthy();
    expect(sent(calls, 'POST', '/api/channel/fetch_models')).toHaveLength(0);
    await user.type(screen.getByRole('textbox', { name: '密钥' }), 'sk-x');
    await user.click(screen.getByRole('button', { name: '获取模型列表' }));
    expect(await screen.findByText('获取到 2 个模型')).toBeTruthy();
    expect(sent(calls, 'POST', '/api/channel/fetch_models')[0]?.body).toEqual({
      base_url: '',
      type: 1,
      key: 'sk-x',
    });
    const chips = screen.getByRole('list', { name: '模型' });
    expect(
      within(chips)
        .getAllByRole('listitem')
        .map((c) => c.textContent),
    ).toEqual(['m1', 'm2']);
  });

  it('edits a channel: the key is write-only (set, 3 keys) and an empty key keeps it', async () => {
    const calls = setUp({
      'PUT /api/channel/': ok(stored),
      'GET /api/channel/fetch_models/7': ok(['gpt-4o', 'gpt-4.1']),
    });
    renderApp('/channel/edit/7');
    const user = userEvent.setup();
    expect(await screen.findByText('已设置密钥（3 个），留空保持不变')).toBeTruthy();
    expect((screen.getByLabelText('名称') as HTMLInputElement).value).toBe('seven');
    expect(screen.queryByRole('switch', { name: '批量创建（每行密钥创建一个渠道）' })).toBeNull();
    const defaultGroup = await screen.findByRole('checkbox', { name: 'default' });
    expect((defaultGroup as HTMLInputElement).checked).toBe(false);
    expect((screen.getByRole('checkbox', { name: 'vip' }) as HTMLInputElement).checked).toBe(true);
    await user.click(screen.getByRole('button', { name: '获取模型列表' }));
    expect(await screen.findByText('获取到 2 个模型')).toBeTruthy();
    await user.click(screen.getByRole('checkbox', { name: 'default' }));
    await user.click(screen.getByRole('button', { name: '提交' }));
    await waitFor(() => expect(sent(calls, 'PUT', '/api/channel/')).toHaveLength(1));
    const body = sent(calls, 'PUT', '/api/channel/')[0]?.body as Record<string, unknown>;
    expect(body).not.toHaveProperty('key');
    expect(body).toMatchObject({
      id: 7,
      name: 'seven',
      models: 'gpt-4o,gpt-4.1',
      group: 'vip,default',
      auto_ban: 0,
      priority: 2,
      weight: 5,
    });
    expect(await screen.findByText('渠道更新成功')).toBeTruthy();
  });

  it('edits max input tokens (an integer ≥ 0) and fills the enabled models', async () => {
    const calls = setUp({
      'GET /api/channel/7': ok({ ...stored, max_input_tokens: 4096 }),
      'GET /api/channel/models_enabled': ok(['gpt-4o', 'claude-3-haiku', 'o3']),
      'PUT /api/channel/': ok(stored),
    });
    renderApp('/channel/edit/7');
    const user = userEvent.setup();
    const limit = (await screen.findByLabelText('最大输入 Tokens')) as HTMLInputElement;
    expect(limit.value).toBe('4096');
    await user.click(screen.getByRole('button', { name: '填入所有已启用模型' }));
    expect(await screen.findByText('已填入 2 个模型')).toBeTruthy();
    const chips = screen.getByRole('list', { name: '模型' });
    expect(
      within(chips)
        .getAllByRole('listitem')
        .map((c) => c.textContent),
    ).toEqual(['gpt-4o', 'claude-3-haiku', 'o3']);
    await user.clear(limit);
    await user.type(limit, '-1');
    await user.click(screen.getByRole('button', { name: '提交' }));
    expect(await screen.findByText('最大输入 Tokens 不能小于 0')).toBeTruthy();
    await user.clear(limit);
    await user.type(limit, '8000');
    await user.click(screen.getByRole('button', { name: '提交' }));
    await waitFor(() => expect(sent(calls, 'PUT', '/api/channel/')).toHaveLength(1));
    expect(sent(calls, 'PUT', '/api/channel/')[0]?.body).toMatchObject({
      id: 7,
      max_input_tokens: 8000,
      models: 'gpt-4o,claude-3-haiku,o3',
    });
  });

  it('says when the enabled models cannot be fetched', async () => {
    setUp({
      'GET /api/channel/models_enabled': {
        status: 500,
        body: { success: false, message: 'boom' },
      },
    });
    renderApp('/channel/add');
    await userEvent.click(await screen.findByRole('button', { name: '填入所有已启用模型' }));
    expect(await screen.findByText(/^获取启用模型失败/)).toBeTruthy();
  });

  it("shows the type's base URL, key format and other-field hints", async () => {
    setUp();
    renderApp('/channel/add');
    const user = userEvent.setup();
    const type = await screen.findByLabelText('类型');
    expect(screen.getByText(/多个密钥每行一个，轮流使用/)).toBeTruthy();
    expect(screen.queryByText(/格式：/)).toBeNull();
    await user.selectOptions(type, '18');
    expect(screen.getByText('格式：APPID|APISecret|APIKey')).toBeTruthy();
    expect(screen.getByText('讯飞星火模型版本，如 v2.1')).toBeTruthy();
    // Spark relays: the editor says what it serves and shows its default host.
    expect(screen.getByText('支持：对话、流式')).toBeTruthy();
    expect(screen.getByLabelText('代理地址').getAttribute('placeholder')).toBe(
      'https://spark-api.xf-yun.com',
    );
    await user.selectOptions(type, '43');
    expect(screen.getByLabelText('代理地址').getAttribute('placeholder')).toBe(
      'https://api.deepseek.com',
    );
  });

  it('a missing channel says so', async () => {
    setUp({ 'GET /api/channel/7': { status: 404, body: { success: false, message: 'nope' } } });
    renderApp('/channel/edit/7');
    expect(await screen.findByText('渠道不存在，请刷新后重试')).toBeTruthy();
  });
});

describe('channel editor drawer', () => {
  it('opens over the list from the add button and the edit link, and closing goes back to /channel', async () => {
    const calls = setUp({
      'GET /api/channel/': ok({ items: [stored], page: 1, page_size: 10, total: 1 }),
    });
    const { router } = renderApp('/channel');
    const user = userEvent.setup();
    const row = await screen.findByRole('row', { name: 'seven' });
    await user.click(screen.getByRole('link', { name: '添加渠道' }));
    const adding = await screen.findByRole('dialog', { name: '添加渠道' });
    expect(router.state.location.pathname).toBe('/channel/add');
    await user.click(within(adding).getByRole('button', { name: '取消' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(router.state.location.pathname).toBe('/channel');

    await user.click(within(row).getByRole('link', { name: '编辑' }));
    const editing = await screen.findByRole('dialog', { name: '编辑渠道' });
    expect(router.state.location.pathname).toBe('/channel/edit/7');
    expect(await within(editing).findByDisplayValue('seven')).toBeTruthy();
    await user.keyboard('{Escape}');
    await waitFor(() => expect(router.state.location.pathname).toBe('/channel'));
    expect(screen.queryByRole('dialog')).toBeNull();
    // the list stayed mounted: loaded once, not again for each drawer
    expect(sent(calls, 'GET', '/api/channel/')).toHaveLength(1);
  });

  it('a click beside the drawer keeps the half-filled form open', async () => {
    setUp();
    const { router } = renderApp('/channel/add');
    const user = userEvent.setup();
    const dialog = await screen.findByRole('dialog', { name: '添加渠道' });
    await user.type(await within(dialog).findByLabelText('名称'), 'half');
    const overlay = document.querySelector<HTMLElement>('.ui-dialog__overlay');
    expect(overlay).not.toBeNull();
    if (overlay) await user.click(overlay);
    expect(screen.getByRole('dialog', { name: '添加渠道' })).toBe(dialog);
    expect((within(dialog).getByLabelText('名称') as HTMLInputElement).value).toBe('half');
    expect(router.state.location.pathname).toBe('/channel/add');
  });

  it('tests the proxy in the field (needs an address) and shows the failure message', async () => {
    let fail = false;
    const calls = setUp({
      'POST /api/channel/test_proxy': () =>
        fail
          ? {
              status: 502,
              body: { success: false, message: 'proxy connection test failed: timeout' },
            }
          : ok({ status: 204, time: 0.4567 }),
    });
    renderApp('/channel/add');
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: '测试代理' }));
    expect(await screen.findByText('请先填写代理地址')).toBeTruthy();
    await user.type(screen.getByLabelText('代理'), 'socks5://u:p@127.0.0.1:1080');
    await user.click(screen.getByRole('button', { name: '测试代理' }));
    expect(await screen.findByText('代理连接正常（HTTP 204，耗时 0.46 秒）')).toBeTruthy();
    // the proxy (with its credentials) goes in the body, never in the URL
    const call = sent(calls, 'POST', '/api/channel/test_proxy')[0];
    expect(call?.body).toEqual({ proxy: 'socks5://u:p@127.0.0.1:1080' });
    expect(call?.url).toBe('/api/channel/test_proxy');
    fail = true;
    await user.click(screen.getByRole('button', { name: '测试代理' }));
    expect(
      await screen.findByText('代理连接测试失败：proxy connection test failed: timeout'),
    ).toBeTruthy();
  });

  it('lets root reveal the key with a two-factor code, copy it, and hides it when the drawer closes', async () => {
    const calls = setUp({
      'POST /api/verify': ({ init }) =>
        JSON.parse(String(init?.body)).code === '123456'
          ? ok({ verified: true, expires_at: 1 })
          : {
              status: 400,
              body: { success: false, message: 'wrong two-factor code', code: 'code_invalid' },
            },
      'POST /api/channel/7/key': ok({ key: 'sk-one\nsk-two' }),
    });
    const { router } = renderApp('/channel/edit/7');
    const user = userEvent.setup();
    const writeText = stubClipboard(); // after userEvent.setup(), which installs its own
    await user.click(await screen.findByRole('button', { name: '查看密钥' }));
    await user.click(screen.getByRole('button', { name: '查看' }));
    expect(await screen.findByText('请输入两步验证码')).toBeTruthy();
    const field = () => screen.getByLabelText('输入两步验证码（或恢复码）以查看密钥');
    await user.type(field(), '000000{Enter}');
    expect(await screen.findByText('查看密钥失败：wrong two-factor code')).toBeTruthy();
    expect(sent(calls, 'POST', '/api/channel/7/key')).toHaveLength(0);
    await user.clear(field());
    await user.type(field(), '123456');
    await user.click(screen.getByRole('button', { name: '查看' }));
    const shown = await screen.findByLabelText('当前密钥');
    expect((shown as HTMLTextAreaElement).value).toBe('sk-one\nsk-two');
    expect(sent(calls, 'POST', '/api/verify').at(-1)?.body).toEqual({ code: '123456' });
    // revealing never submitted the channel form
    expect(sent(calls, 'PUT', '/api/channel/')).toHaveLength(0);
    await user.click(screen.getByRole('button', { name: '复制' }));
    expect(writeText).toHaveBeenCalledWith('sk-one\nsk-two');
    expect(await screen.findByText('密钥已复制到剪贴板')).toBeTruthy();

    await user.click(screen.getByRole('button', { name: '取消' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/channel'));
    await act(() => router.navigate('/channel/edit/7'));
    expect(await screen.findByRole('button', { name: '查看密钥' })).toBeTruthy();
    expect(screen.queryByLabelText('当前密钥')).toBeNull();
  });

  it('tells a root without two-factor to turn it on', async () => {
    setUp({
      'POST /api/verify': {
        status: 403,
        body: { success: false, message: 'not on', code: 'two_factor_not_enabled' },
      },
    });
    renderApp('/channel/edit/7');
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: '查看密钥' }));
    await user.type(screen.getByLabelText('输入两步验证码（或恢复码）以查看密钥'), '123456{Enter}');
    expect(await screen.findByText('查看渠道密钥需要先开启两步验证。')).toBeTruthy();
    expect(screen.getByRole('link', { name: '前往个人设置开启' }).getAttribute('href')).toBe(
      '/personal',
    );
  });

  it('offers the key reveal to root only', async () => {
    setUp();
    useSession.getState().setUser(makeUser({ id: 2, username: 'admin', role: 10 }));
    renderApp('/channel/edit/7');
    expect(await screen.findByText('已设置密钥（3 个），留空保持不变')).toBeTruthy();
    expect(screen.queryByRole('button', { name: '查看密钥' })).toBeNull();
  });

  it('notes the key lines the server disabled, and explains the rotation', async () => {
    setUp({
      'GET /api/channel/7': ok({
        ...stored,
        other_info: JSON.stringify({
          disabled_keys: [
            { index: 2, fingerprint: 'x', reason: 'invalid key', time: 1 },
            { index: 0, fingerprint: 'y', reason: 'invalid key', time: 2 },
          ],
        }),
      }),
    });
    renderApp('/channel/edit/7');
    expect(
      await screen.findByText(
        '以下密钥行已被自动禁用：第 1、3 行（共 2 个）。替换或删除这些行后保存即可恢复。',
      ),
    ).toBeTruthy();
    expect(
      screen.getByText(/上游判定无效的密钥会被单独禁用，全部密钥被禁用时渠道自动禁用/),
    ).toBeTruthy();
  });

  it('hints the JSON key of Vertex AI and the full URL of a custom channel', async () => {
    setUp();
    renderApp('/channel/add');
    const user = userEvent.setup();
    const type = await screen.findByLabelText('类型');
    await user.selectOptions(type, '41');
    expect(screen.getByText(/格式：服务账号 JSON 密钥（整个 JSON 文件内容）/)).toBeTruthy();
    await user.selectOptions(type, '8');
    expect(screen.getByText(/该类型没有默认地址，请填写完整的请求地址前缀/)).toBeTruthy();
    await user.selectOptions(type, '3');
    expect(screen.getByText(/Azure 资源的终结点/)).toBeTruthy();
    await user.selectOptions(type, '22');
    expect(screen.getByText('格式：APIKey-AppId')).toBeTruthy();
  });
});

describe('channel editor from the type table', () => {
  it('offers exactly the types the server lists, with what each one serves', async () => {
    setUp();
    renderApp('/channel/add');
    const user = userEvent.setup();
    const type = (await screen.findByLabelText('类型')) as HTMLSelectElement;
    expect([...type.options].map((o) => o.value)).toEqual(
      channelTypesData.map((t) => String(t.id)),
    );
    const labels = [...type.options].map((o) => o.textContent);
    // Labels through i18next: the translated name, not the server's English one.
    expect(labels).toContain('OpenAI');
    expect(labels).toContain('讯飞星火认知');
    expect(labels).not.toContain('Spark');
    expect(
      screen.getByText('支持：对话、流式、文本补全、Responses、嵌入、绘图、语音、重排序、内容审核'),
    ).toBeTruthy();
    expect(screen.queryByText(/暂不支持转发该类型/)).toBeNull();
    await user.selectOptions(type, '21');
    expect(screen.getByText(/Tollgate 暂不支持转发该类型/)).toBeTruthy();
    await user.selectOptions(type, '39');
    expect(screen.queryByText(/暂不支持转发该类型/)).toBeNull();
    await user.selectOptions(type, '33');
    expect(screen.getByText(/格式：AK\|SK\|Region/)).toBeTruthy();
  });

  it("renders the type's fields from its descriptors and stores setting fields in setting", async () => {
    const calls = setUp({ 'POST /api/channel/': ok({ ids: [9] }) });
    renderApp('/channel/add');
    const user = userEvent.setup();
    const type = await screen.findByLabelText('类型');
    // OpenAI has no extra field.
    expect(screen.queryByLabelText('部署地区')).toBeNull();
    await user.selectOptions(type, '41');
    const region = screen.getByLabelText('部署地区');
    expect(region.getAttribute('placeholder')).toBe('global');
    expect(screen.getByText('部署地区，如 us-central1；留空为 global')).toBeTruthy();
    const keyType = screen.getByLabelText('密钥类型') as HTMLSelectElement;
    expect([...keyType.options].map((o) => o.textContent)).toEqual(['服务账号 JSON', 'API Key']);
    expect(screen.getByText(/服务账号 JSON 密钥（整个 JSON 文件内容）/)).toBeTruthy();
    // Both key forms are named: the key type's help and the service-account hint.
    expect(screen.getByText(/或 Vertex AI 快速模式（express mode）API Key/)).toBeTruthy();
    expect(screen.getByText(/也可使用快速模式（express mode）API Key/)).toBeTruthy();
    await user.selectOptions(keyType, 'api_key');
    expect(screen.queryByText(/服务账号 JSON 密钥（整个 JSON 文件内容）/)).toBeNull();
    expect(screen.getByText(/^格式：Vertex AI 快速模式（express mode）API Key/)).toBeTruthy();
    expect((screen.getByLabelText('渠道额外设置') as HTMLTextAreaElement).value).toBe(
      '{"vertex_key_type":"api_key"}',
    );
    await user.type(screen.getByLabelText('名称'), 'vertex');
    await user.type(screen.getByRole('textbox', { name: '密钥' }), 'AIza-1');
    await user.type(screen.getByPlaceholderText('输入模型名称'), 'gemini-2.5-pro{Enter}');
    await user.type(region, 'us-central1');
    await user.click(screen.getByRole('button', { name: '提交' }));
    await waitFor(() => expect(sent(calls, 'POST', '/api/channel/')).toHaveLength(1));
    expect(sent(calls, 'POST', '/api/channel/')[0]?.body).toMatchObject({
      channel: {
        type: 41,
        other: 'us-central1',
        setting: '{"vertex_key_type":"api_key"}',
      },
    });
  });

  it('requires the required fields, and fills an empty field with its default', async () => {
    const calls = setUp({ 'POST /api/channel/': ok({ ids: [9] }) });
    renderApp('/channel/add');
    const user = userEvent.setup();
    const type = await screen.findByLabelText('类型');
    await user.selectOptions(type, '39');
    await user.type(screen.getByLabelText('名称'), 'cf');
    await user.type(screen.getByRole('textbox', { name: '密钥' }), 'cf-key');
    await user.type(screen.getByPlaceholderText('输入模型名称'), 'm{Enter}');
    await user.click(screen.getByRole('button', { name: '提交' }));
    expect(await screen.findByText('此项必填')).toBeTruthy();
    expect(sent(calls, 'POST', '/api/channel/')).toHaveLength(0);
    await user.type(screen.getByLabelText('Account ID'), 'acc-1');
    await user.click(screen.getByRole('button', { name: '提交' }));
    await waitFor(() => expect(sent(calls, 'POST', '/api/channel/')).toHaveLength(1));
    expect(sent(calls, 'POST', '/api/channel/')[0]?.body).toMatchObject({
      channel: { type: 39, other: 'acc-1' },
    });
  });

  it('says so when the type table cannot be loaded', async () => {
    setUp({ 'GET /api/channel/types': { status: 500, body: { success: false, message: 'x' } } });
    renderApp('/channel/add');
    expect(await screen.findByText('加载渠道类型失败')).toBeTruthy();
  });
});
