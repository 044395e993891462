import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';

import { fromLocalInput } from '@/lib/time';
import { useSession } from '@/stores/session';
import { mockApi, statusData } from '@/test/api-mock';
import type { MockAnswer } from '@/test/api-mock';
import { renderApp } from '@/test/render-app';
import { makeUser } from '@/test/users';

import { checkField } from './fields';
import { checkBlock } from './home-blocks';
import { oneMonthAgo } from './log-clear';

const root = makeUser({ id: 1, username: 'root', role: 100 });
/** 2026-03-15 12:00 local time: the default clearing time is 2026-02-15 12:00. */
const NOW = new Date('2026-03-15T12:00').getTime();

const ok = (data: unknown = null, message = '') => ({ body: { success: true, message, data } });
const options = {
  LogConsumeEnabled: 'true',
  LogRetentionDays: '0',
  QuotaForNewUser: '0',
  PreConsumedQuota: '500',
  QuotaForInviter: '0',
  QuotaForInvitee: '0',
  GroupRatio: '{"default":1}',
  UserUsableGroups: '{"default":"默认分组"}',
  ModelRequestRateLimitGroup: '{}',
  DataExportDefaultTime: 'hour',
  ModelDescriptions: '{"gpt-4o":"旗舰"}',
};
const idle = {
  running: false,
  target_timestamp: 0,
  total: 0,
  deleted: 0,
  started_at: 0,
  finished_at: 0,
  automatic: false,
  error: '',
};

function setUp(extra: Record<string, MockAnswer> = {}) {
  vi.spyOn(Date, 'now').mockReturnValue(NOW);
  useSession.getState().setUser(root);
  return mockApi({
    'GET /api/status': { body: statusData() },
    'GET /api/option/': ok(Object.entries(options).map(([key, value]) => ({ key, value }))),
    'PUT /api/option/': ok(),
    'GET /api/log/delete_progress': ok(idle),
    ...extra,
  });
}

afterEach(() => useSession.getState().clearUser());

const section = (name: string) => screen.getByRole('region', { name });

describe('settings page', () => {
  it('is for admins only', async () => {
    mockApi({ 'GET /api/status': { body: statusData() } });
    useSession.getState().setUser(makeUser({ id: 9, username: 'plain' }));
    const { router } = renderApp('/setting');
    await waitFor(() => expect(router.state.location.pathname).toBe('/'));
  });

  it('shows the tabs of the spec, operation first, and keeps the tab in ?tab=', async () => {
    setUp();
    const { router } = renderApp('/setting');
    expect(await screen.findByRole('heading', { name: '系统设置', level: 1 })).toBeTruthy();
    const tabs = screen.getAllByRole('tab').map((tab) => tab.textContent);
    expect(tabs.slice(0, 5)).toEqual([
      '运营设置',
      '速率限制设置',
      '模型相关设置',
      '系统设置',
      '其他设置',
    ]);
    const titles = (await screen.findAllByRole('heading', { level: 2 })).map((h) => h.textContent);
    expect(titles).toEqual([
      '通用设置',
      '绘图设置',
      '屏蔽词过滤设置',
      '日志设置',
      '数据看板设置',
      '监控设置',
      '额度设置',
      '令牌聊天设置',
      '分组倍率设置',
      '模型倍率设置',
    ]);
    await userEvent.click(screen.getByRole('tab', { name: '速率限制设置' }));
    expect(router.state.location.search).toBe('?tab=ratelimit');
    expect(await screen.findByRole('heading', { name: '模型请求速率限制' })).toBeTruthy();
    // The rate-limit engine's group and model rules (P15) are edited beside the spec's limit.
    expect(screen.getByLabelText('分组与模型限流规则')).toBeTruthy();
  });

  it('opens the tab named in the query', async () => {
    setUp();
    renderApp('/setting?tab=models');
    expect(await screen.findByRole('heading', { name: 'Gemini 设置' })).toBeTruthy();
    expect(screen.getByRole('tab', { name: '模型相关设置' }).getAttribute('aria-selected')).toBe(
      'true',
    );
  });

  it('clears logs before a month ago after confirmation and follows the background job', async () => {
    let polls = 0;
    const calls = setUp({
      'DELETE /api/log/': ok(1500, '200 of 1500 logs deleted so far'),
      'GET /api/log/delete_progress': () => {
        polls += 1;
        const target = oneMonthAgo(NOW);
        if (polls === 1) return ok(idle);
        if (polls <= 3) {
          return ok({
            ...idle,
            running: true,
            target_timestamp: target,
            total: 1500,
            deleted: 700,
          });
        }
        return ok({
          ...idle,
          target_timestamp: target,
          total: 1500,
          deleted: 1500,
          started_at: 1,
          finished_at: NOW / 1000,
        });
      },
    });
    renderApp('/setting');
    const logs = await screen.findByRole('region', { name: '日志设置' });
    const time = within(logs).getByLabelText('日志清理时间') as HTMLInputElement;
    expect(fromLocalInput(time.value)).toBe(new Date('2026-02-15T12:00').getTime() / 1000);

    await userEvent.click(within(logs).getByRole('button', { name: '清除历史日志' }));
    const dialog = await screen.findByRole('dialog');
    expect(
      within(dialog).getByText(/确定要删除 2026-02-15 12:00:00 之前的所有日志吗/),
    ).toBeTruthy();
    expect(calls.some((c) => c.method === 'DELETE')).toBe(false);
    await userEvent.click(within(dialog).getByRole('button', { name: '确定删除' }));

    const target = new Date('2026-02-15T12:00').getTime() / 1000;
    await waitFor(() =>
      expect(calls.find((c) => c.method === 'DELETE')?.url).toBe(
        `/api/log/?target_timestamp=${target}`,
      ),
    );
    expect(await within(logs).findByText('正在删除：700 / 1500')).toBeTruthy();
    expect(within(logs).getByLabelText('删除进度').getAttribute('value')).toBe('700');
    expect(await screen.findByText('已清除 1500 条日志', {}, { timeout: 8000 })).toBeTruthy();
    expect(within(logs).getByText(/上次清理删除了 .* 之前的 1500 条日志/)).toBeTruthy();
  });

  it('a small deletion finishes at once and says how many were deleted', async () => {
    let deleted = false;
    setUp({
      'DELETE /api/log/': () => {
        deleted = true;
        return ok(42);
      },
      'GET /api/log/delete_progress': () =>
        ok(deleted ? { ...idle, total: 42, deleted: 42, started_at: 1, finished_at: 2 } : idle),
    });
    renderApp('/setting');
    const logs = await screen.findByRole('region', { name: '日志设置' });
    fireEvent.change(within(logs).getByLabelText('日志清理时间'), {
      target: { value: '2026-01-01T00:00' },
    });
    await userEvent.click(within(logs).getByRole('button', { name: '清除历史日志' }));
    await userEvent.click(await screen.findByRole('button', { name: '确定删除' }));
    expect(await screen.findByText('已清除 42 条日志')).toBeTruthy();
  });

  it('needs a time, and shows a refusal', async () => {
    setUp({
      'DELETE /api/log/': {
        body: { success: false, message: 'a log deletion is already running' },
      },
    });
    renderApp('/setting');
    const logs = await screen.findByRole('region', { name: '日志设置' });
    const time = within(logs).getByLabelText('日志清理时间');
    fireEvent.change(time, { target: { value: '' } });
    await userEvent.click(within(logs).getByRole('button', { name: '清除历史日志' }));
    expect(await screen.findByText('请选择日志清理时间')).toBeTruthy();
    expect(screen.queryByRole('dialog')).toBeNull();

    fireEvent.change(time, { target: { value: '2026-01-01T00:00' } });
    await userEvent.click(within(logs).getByRole('button', { name: '清除历史日志' }));
    await userEvent.click(await screen.findByRole('button', { name: '确定删除' }));
    expect(await screen.findByText('日志清理失败：a log deletion is already running')).toBeTruthy();
  });

  it('saves only the changed options of a section', async () => {
    const calls = setUp();
    renderApp('/setting');
    const quota = await screen.findByRole('region', { name: '额度设置' });
    await userEvent.click(within(quota).getByRole('button', { name: '保存额度设置' }));
    expect(await screen.findByText('你似乎并没有修改什么')).toBeTruthy();

    const field = within(quota).getByLabelText('新用户初始额度');
    await userEvent.clear(field);
    await userEvent.type(field, '250000');
    await userEvent.click(within(quota).getByRole('button', { name: '保存额度设置' }));
    expect(await screen.findByText('保存成功')).toBeTruthy();
    expect(calls.filter((c) => c.method === 'PUT').map((c) => c.body)).toEqual([
      { key: 'QuotaForNewUser', value: '250000' },
    ]);

    await userEvent.click(
      within(section('日志设置')).getByRole('switch', { name: '启用额度消费日志记录' }),
    );
    await userEvent.click(
      within(section('日志设置')).getByRole('button', { name: '保存日志设置' }),
    );
    await waitFor(() =>
      expect(calls.filter((c) => c.method === 'PUT').at(-1)?.body).toEqual({
        key: 'LogConsumeEnabled',
        value: 'false',
      }),
    );
  });

  it('refuses bad JSON and negative numbers before saving', async () => {
    const calls = setUp();
    renderApp('/setting');
    const groups = await screen.findByRole('region', { name: '分组倍率设置' });
    const ratio = within(groups).getByLabelText('分组倍率');
    fireEvent.change(ratio, { target: { value: '{"default": 1,' } });
    await userEvent.click(within(groups).getByRole('button', { name: '保存分组倍率设置' }));
    expect(await screen.findByText('请检查输入')).toBeTruthy();
    expect(within(groups).getByText('不是合法的 JSON 字符串')).toBeTruthy();

    const quota = section('额度设置');
    const field = within(quota).getByLabelText('请求预扣费额度');
    await userEvent.clear(field);
    await userEvent.type(field, '-1');
    await userEvent.click(within(quota).getByRole('button', { name: '保存额度设置' }));
    expect(await within(quota).findByText('不能小于 0')).toBeTruthy();
    expect(calls.some((c) => c.method === 'PUT')).toBe(false);
  });

  it('says when some of the options failed to save', async () => {
    setUp({
      'PUT /api/option/': ({ init }) =>
        JSON.parse(String(init?.body)).key === 'QuotaForInviter'
          ? { body: { success: false, message: 'nope' } }
          : ok(),
    });
    renderApp('/setting');
    const quota = await screen.findByRole('region', { name: '额度设置' });
    for (const label of ['邀请新用户奖励额度', '新用户使用邀请码奖励额度']) {
      const field = within(quota).getByLabelText(label);
      await userEvent.clear(field);
      await userEvent.type(field, '5');
    }
    await userEvent.click(within(quota).getByRole('button', { name: '保存额度设置' }));
    expect(await screen.findByText('部分保存失败，请重试')).toBeTruthy();
  });
});

describe('system and other tabs (spec 01 §5)', () => {
  it('strips trailing slashes, sends a secret only when typed and then forgets it', async () => {
    const calls = setUp();
    renderApp('/setting?tab=system');
    const server = await screen.findByRole('region', { name: '通用设置' });
    await userEvent.type(within(server).getByLabelText('服务器地址'), 'https://gate.example.com//');
    await userEvent.click(within(server).getByRole('button', { name: '保存通用设置' }));
    await waitFor(() =>
      expect(calls.filter((c) => c.method === 'PUT').map((c) => c.body)).toEqual([
        { key: 'ServerAddress', value: 'https://gate.example.com' },
      ]),
    );

    const smtp = section('配置 SMTP');
    const token = within(smtp).getByLabelText('SMTP 访问凭证') as HTMLInputElement;
    expect(token.type).toBe('password');
    expect(token.value).toBe('');
    await userEvent.type(within(smtp).getByLabelText('SMTP 服务器地址'), 'smtp.example.com');
    await userEvent.click(within(smtp).getByRole('button', { name: '保存配置 SMTP' }));
    await waitFor(() => expect(calls.filter((c) => c.method === 'PUT')).toHaveLength(2));
    expect(calls.filter((c) => c.method === 'PUT').at(-1)?.body).toEqual({
      key: 'SMTPServer',
      value: 'smtp.example.com',
    });

    await userEvent.type(token, 'app-password');
    await userEvent.click(within(smtp).getByRole('button', { name: '保存配置 SMTP' }));
    await waitFor(() =>
      expect(calls.filter((c) => c.method === 'PUT').at(-1)?.body).toEqual({
        key: 'SMTPToken',
        value: 'app-password',
      }),
    );
    await waitFor(() => expect(token.value).toBe(''));
  });

  it('needs the server address before payment, and checks the JSON and the OIDC URL', async () => {
    const calls = setUp();
    renderApp('/setting?tab=system');
    const payment = await screen.findByRole('region', { name: '支付设置' });
    await userEvent.type(within(payment).getByLabelText('易支付商户 ID'), '1001');
    await userEvent.click(within(payment).getByRole('button', { name: '保存支付设置' }));
    expect(await screen.findByText('请先填写服务器地址')).toBeTruthy();

    fireEvent.change(within(payment).getByLabelText('充值分组倍率'), { target: { value: '{' } });
    await userEvent.click(within(payment).getByRole('button', { name: '保存支付设置' }));
    expect(await within(payment).findByText('充值分组倍率不是合法的 JSON 字符串')).toBeTruthy();

    const oidc = section('配置 OIDC');
    await userEvent.type(within(oidc).getByLabelText('Well-Known URL'), 'issuer.example.com');
    await userEvent.click(within(oidc).getByRole('button', { name: '保存配置 OIDC' }));
    expect(
      await within(oidc).findByText('Well-Known URL 必须以 http:// 或 https:// 开头'),
    ).toBeTruthy();
    expect(calls.some((c) => c.method === 'PUT')).toBe(false);
  });

  it('fetches the OIDC endpoints through the server and saves them with the section', async () => {
    const calls = setUp({
      'POST /api/option/oidc_discovery': ok({
        authorization_endpoint: 'https://idp.example/auth',
        token_endpoint: 'https://idp.example/token',
        user_info_endpoint: 'https://idp.example/me',
      }),
    });
    renderApp('/setting?tab=system');
    const oidc = await screen.findByRole('region', { name: '配置 OIDC' });
    const fetchButton = within(oidc).getByRole('button', { name: '获取 OIDC 配置' });
    await userEvent.type(within(oidc).getByLabelText('Well-Known URL'), 'idp.example');
    await userEvent.click(fetchButton);
    expect(await screen.findByText('Well-Known URL 必须以 http:// 或 https:// 开头')).toBeTruthy();
    expect(calls.some((c) => c.method === 'POST')).toBe(false);

    const wellKnown = within(oidc).getByLabelText('Well-Known URL');
    await userEvent.clear(wellKnown);
    await userEvent.type(wellKnown, 'https://idp.example/.well-known/openid-configuration');
    await userEvent.click(fetchButton);
    expect(await screen.findByText('获取 OIDC 配置成功！')).toBeTruthy();
    expect(calls.find((c) => c.method === 'POST')?.body).toEqual({
      well_known: 'https://idp.example/.well-known/openid-configuration',
    });
    expect((within(oidc).getByLabelText('Token Endpoint') as HTMLInputElement).value).toBe(
      'https://idp.example/token',
    );
    await userEvent.click(within(oidc).getByRole('button', { name: '保存配置 OIDC' }));
    await waitFor(() =>
      expect(calls.filter((c) => c.method === 'PUT').map((c) => c.body)).toEqual([
        {
          key: 'oidc.well_known',
          value: 'https://idp.example/.well-known/openid-configuration',
        },
        { key: 'oidc.authorization_endpoint', value: 'https://idp.example/auth' },
        { key: 'oidc.token_endpoint', value: 'https://idp.example/token' },
        { key: 'oidc.user_info_endpoint', value: 'https://idp.example/me' },
      ]),
    );
  });

  it('says when the OIDC configuration cannot be fetched', async () => {
    setUp({
      'POST /api/option/oidc_discovery': {
        status: 502,
        body: {
          success: false,
          message: 'OIDC provider: the discovery document could not be reached',
        },
      },
    });
    renderApp('/setting?tab=system');
    const oidc = await screen.findByRole('region', { name: '配置 OIDC' });
    await userEvent.type(within(oidc).getByLabelText('Well-Known URL'), 'https://idp.example/x');
    await userEvent.click(within(oidc).getByRole('button', { name: '获取 OIDC 配置' }));
    expect(
      await screen.findByText('获取 OIDC 配置失败，请检查网络状况和 Well-Known URL 是否正确'),
    ).toBeTruthy();
  });

  it('root resets the model ratios after confirming', async () => {
    const calls = setUp({
      'POST /api/option/rest_model_ratio': ok(null, 'the model ratios were reset to the defaults'),
    });
    renderApp('/setting');
    const ratios = await screen.findByRole('region', { name: '模型倍率设置' });
    await userEvent.click(within(ratios).getByRole('button', { name: '重置模型倍率' }));
    const dialog = await screen.findByRole('dialog', { name: '重置模型倍率' });
    expect(calls.some((c) => c.method === 'POST')).toBe(false);
    await userEvent.click(within(dialog).getByRole('button', { name: '确定' }));
    expect(await screen.findByText('重置成功')).toBeTruthy();
    expect(calls.filter((c) => c.method === 'POST').map((c) => c.url)).toEqual([
      '/api/option/rest_model_ratio',
    ]);
  });

  it('does not offer an admin the root-only ratio reset', async () => {
    setUp();
    useSession.getState().setUser(makeUser({ id: 2, username: 'adm', role: 10 }));
    renderApp('/setting');
    await screen.findByRole('region', { name: '日志设置' });
    expect(screen.queryByRole('button', { name: '重置模型倍率' })).toBeNull();
  });

  it('offers StreamCacheQueueLength for compatibility and says it has no effect', async () => {
    const calls = setUp();
    renderApp('/setting');
    const sensitive = await screen.findByRole('region', { name: '屏蔽词过滤设置' });
    const field = within(sensitive).getByLabelText('流模式下缓存队列长度');
    expect(within(sensitive).getByText('仅为兼容保留，设置后没有任何效果')).toBeTruthy();
    await userEvent.type(field, '8');
    await userEvent.click(within(sensitive).getByRole('button', { name: '保存屏蔽词过滤设置' }));
    await waitFor(() =>
      expect(calls.filter((c) => c.method === 'PUT').map((c) => c.body)).toEqual([
        { key: 'StreamCacheQueueLength', value: '8' },
      ]),
    );
  });

  it('root sets the image read proxy in the proxy settings of the system tab', async () => {
    const calls = setUp();
    renderApp('/setting?tab=system');
    const proxies = await screen.findByRole('region', { name: '代理设置' });
    const field = within(proxies).getByLabelText('图片读取代理');
    expect(within(proxies).getByText(/经代理时不跟随重定向/)).toBeTruthy();
    await userEvent.type(field, 'socks5://127.0.0.1:1080');
    await userEvent.click(within(proxies).getByRole('button', { name: '保存代理设置' }));
    await waitFor(() =>
      expect(calls.filter((c) => c.method === 'PUT').map((c) => c.body)).toEqual([
        { key: 'ImageReadProxy', value: 'socks5://127.0.0.1:1080' },
      ]),
    );
  });

  it('the other tab saves each content field on its own, with its notice', async () => {
    const calls = setUp();
    renderApp('/setting?tab=other');
    await userEvent.type(await screen.findByLabelText('公告'), '维护通知');
    await userEvent.type(screen.getByLabelText('页脚'), '<b>f</b>');
    await userEvent.click(screen.getByRole('button', { name: '设置公告' }));
    expect(await screen.findByText('公告已更新')).toBeTruthy();
    const puts = calls.filter((c) => c.method === 'PUT').map((c) => c.body);
    expect(puts).toEqual([{ key: 'Notice', value: '维护通知' }]);
    await userEvent.click(screen.getByRole('button', { name: '设置页脚' }));
    expect(await screen.findByText('页脚内容已更新')).toBeTruthy();
  });

  it('shows an admin who is not root the operation options read-only, with a note', async () => {
    setUp();
    useSession.getState().setUser(makeUser({ id: 2, username: 'ops', role: 10 }));
    renderApp('/setting');
    expect(await screen.findByText(/只有超级管理员可以修改系统设置/)).toBeTruthy();
    const tabs = screen.getAllByRole('tab').map((tab) => tab.textContent);
    expect(tabs).toEqual(['运营设置', '速率限制设置', '模型相关设置']);
    const logs = await screen.findByRole('region', { name: '日志设置' });
    const retention = within(logs).getByLabelText('自动清理日志（天）');
    expect(retention.matches(':disabled')).toBe(true);
    expect(screen.queryByRole('button', { name: /^保存/ })).toBeNull();
    expect(screen.queryByRole('button', { name: '清除历史日志' })).toBeNull();
  });
});

describe('home page blocks (other tab)', () => {
  it('checks each block is JSON of its shape, then saves it on its own with its notice', async () => {
    const calls = setUp();
    renderApp('/setting?tab=other');
    const blocks = await screen.findByRole('region', { name: '首页配置' });
    const links = within(blocks).getByLabelText('自定义导航链接');
    const saveLinks = within(blocks).getByRole('button', { name: '保存自定义导航链接' });

    fireEvent.change(links, { target: { value: '[{"text": "Docs"' } });
    await userEvent.click(saveLinks);
    expect(await within(blocks).findByText('不是合法的 JSON 字符串')).toBeTruthy();

    fireEvent.change(links, {
      target: { value: '[{"text": "Docs", "url": "https://d.example"}]' },
    });
    await userEvent.click(saveLinks);
    expect(await within(blocks).findByText('格式不正确（位置：0.item_key）')).toBeTruthy();
    expect(calls.some((c) => c.method === 'PUT')).toBe(false);

    fireEvent.change(links, {
      target: { value: '[{"text": "Docs", "item_key": "docs", "url": "https://d.example"}]' },
    });
    await userEvent.click(saveLinks);
    expect(await screen.findByText('自定义导航链接已更新')).toBeTruthy();
    expect(calls.filter((c) => c.method === 'PUT').map((c) => c.body)).toEqual([
      {
        key: 'CustemNavLinks',
        value: '[{"text":"Docs","item_key":"docs","url":"https://d.example"}]',
      },
    ]);

    fireEvent.change(within(blocks).getByLabelText('首页打字文案'), {
      target: { value: '["快速", "稳定"]' },
    });
    await userEvent.click(within(blocks).getByRole('button', { name: '保存首页打字文案' }));
    expect(await screen.findByText('首页打字文案已更新')).toBeTruthy();
    expect(calls.filter((c) => c.method === 'PUT').at(-1)?.body).toEqual({
      key: 'TypingList',
      value: '["快速","稳定"]',
    });
  });

  it('shows a stored block pretty-printed and says when nothing changed', async () => {
    const calls = setUp();
    renderApp('/setting?tab=other');
    const blocks = await screen.findByRole('region', { name: '首页配置' });
    const descriptions = within(blocks).getByLabelText('模型描述') as HTMLTextAreaElement;
    expect(descriptions.value).toBe('{\n  "gpt-4o": "旗舰"\n}');
    await userEvent.click(within(blocks).getByRole('button', { name: '保存模型描述' }));
    expect(await screen.findByText('你似乎并没有修改什么')).toBeTruthy();
    expect(calls.some((c) => c.method === 'PUT')).toBe(false);
  });

  it("knows every block's shape", () => {
    expect(checkBlock('TypingList', '["a"]')).toBeNull();
    expect(checkBlock('TypingList', '[1]')).toEqual({ kind: 'shape', path: '0' });
    expect(checkBlock('ModelDescriptions', '{"m": "d"}')).toBeNull();
    expect(checkBlock('ModelDescriptions', '[]')).toEqual({ kind: 'shape', path: '' });
    expect(
      checkBlock('Advantages', '[{"title": "t", "description": "d", "color": "red"}]'),
    ).toBeNull();
    expect(checkBlock('Providers', '[{"name": "OpenAI", "includes": ["gpt-4o"]}]')).toBeNull();
    expect(checkBlock('Providers', '{')).toEqual({ kind: 'json' });
  });
});

describe('option checks (spec 02 §5)', () => {
  it('checks numbers, bounds and JSON', () => {
    expect(checkField({ type: 'int', min: 0 }, '3')).toBeNull();
    expect(checkField({ type: 'int', min: 0 }, '1.5')).toBe('number');
    expect(checkField({ type: 'int', min: 1 }, '0')).toBe('min');
    expect(checkField({ type: 'int', min: 0 }, '')).toBe('number');
    expect(checkField({ type: 'float', min: 0.1, max: 1 }, '0.05')).toBe('min');
    expect(checkField({ type: 'float', min: 0.1, max: 1 }, '1.2')).toBe('max');
    expect(checkField({ type: 'float', min: 0.1, max: 1 }, '0.6')).toBeNull();
    expect(checkField({ type: 'json' }, '{"a":1}')).toBeNull();
    expect(checkField({ type: 'json' }, '{a:1}')).toBe('invalidJson');
    const groups = { type: 'json', check: 'rateLimitGroups' } as const;
    expect(checkField(groups, '{"default":[0,1],"vip":[200,100]}')).toBeNull();
    expect(checkField(groups, '{"default":[10,0]}')).toBe('rateLimitGroups');
    expect(checkField(groups, '{"default":[-1,5]}')).toBe('rateLimitGroups');
    expect(checkField(groups, '[1,2]')).toBe('rateLimitGroups');
    expect(checkField({ type: 'text' }, 'anything')).toBeNull();
  });

  it('a month ago is the same day of the previous month', () => {
    expect(oneMonthAgo(new Date('2026-03-15T12:00').getTime())).toBe(
      new Date('2026-02-15T12:00').getTime() / 1000,
    );
  });
});
