import { once } from 'node:events';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

import { ROOT, setUp } from './api';
import { expect, test } from './fixtures';
import type { TollgateServer } from './tollgate-server';

/** The model the mock channel serves, priced below with ratio 250 and completion ratio 2. */
const MODEL = 'e2e-model';

/** An OpenAI-style upstream: the n-th chat answer reports n×100 prompt and n×10 completion tokens. */
async function startMockUpstream(): Promise<{
  base: string;
  calls: () => number;
  close: () => void;
}> {
  let calls = 0;
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
        res.writeHead(404, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'not found' } }));
        return;
      }
      calls += 1;
      const model = (JSON.parse(body) as { model?: string }).model ?? MODEL;
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({
          id: `chatcmpl-e2e-${calls}`,
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model,
          choices: [
            { index: 0, message: { role: 'assistant', content: 'pong' }, finish_reason: 'stop' },
          ],
          usage: {
            prompt_tokens: calls * 100,
            completion_tokens: calls * 10,
            total_tokens: calls * 110,
          },
        }),
      );
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port for the mock');
  return {
    base: `http://127.0.0.1:${address.port}`,
    calls: () => calls,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

/** A console session over the API: the cookie from POST /api/user/login plus New-Api-User. */
async function signIn(server: TollgateServer) {
  const login = await fetch(`${server.baseURL}/api/user/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(ROOT),
  });
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const { data } = (await login.json()) as { data: { id: number } };
  return async <T = unknown>(method: string, path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${server.baseURL}${path}`, {
      method,
      headers: {
        'Content-Type': 'application/json',
        Cookie: cookie,
        'New-Api-User': String(data.id),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const answer = (await response.json()) as { success: boolean; message: string; data: T };
    if (!response.ok || !answer.success) {
      throw new Error(`${method} ${path} answered ${response.status}: ${answer.message}`);
    }
    return answer.data;
  };
}

test('three requests through a mock channel show in /log with their quota and details', async ({
  page,
  server,
}) => {
  const mock = await startMockUpstream();
  try {
    await setUp(server);
    const api = await signIn(server);
    await api('PUT', '/api/option/', {
      key: 'ModelRatio',
      value: JSON.stringify({ [MODEL]: 250 }),
    });
    await api('PUT', '/api/option/', {
      key: 'CompletionRatio',
      value: JSON.stringify({ [MODEL]: 2 }),
    });
    await api('PUT', '/api/option/', { key: 'DisplayInCurrencyEnabled', value: 'true' });
    await api('POST', '/api/channel/', {
      name: 'e2e-mock',
      type: 1,
      key: 'sk-upstream',
      base_url: mock.base,
      models: MODEL,
      group: 'default',
    });
    await api('PUT', '/api/user/', { id: 1, quota: 50_000_000 });
    const token = await api<{ id: number }>('POST', '/api/token/', {
      name: 'e2e-key',
      remain_quota: 5_000_000,
    });
    const { key } = await api<{ key: string }>('POST', `/api/token/${token.id}/key`, {});

    for (let i = 0; i < 3; i += 1) {
      const response = await fetch(`${server.baseURL}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${key}` },
        body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'ping' }] }),
      });
      expect(response.status, await response.clone().text()).toBe(200);
    }
    expect(mock.calls()).toBe(3);

    await page.goto('/login');
    await page.getByLabel('用户名或邮箱').fill(ROOT.username);
    await page.getByLabel('密码').fill(ROOT.password);
    await page.getByRole('button', { name: '登录' }).click();
    await expect(page).toHaveURL(/\/(token|console|$)/);

    // Logs are committed by the log writer shortly after each answer. The balance set above
    // has its own row (type 3, manage) beside the three consume rows.
    const rows = page.locator('tbody tr[data-type="2"]');
    await expect(async () => {
      await page.goto('/log');
      await expect(rows).toHaveCount(3, { timeout: 2_000 });
    }).toPass({ timeout: 20_000 });
    await expect(page.locator('tbody tr[data-type="3"]')).toHaveCount(1);

    // Newest first: 250 × (n×100 + 2 × n×10) = n × 30000 units = n × $0.06.
    const costColumn = await page
      .getByRole('columnheader')
      .allTextContents()
      .then((headers) => headers.indexOf('花费'));
    expect(costColumn).toBeGreaterThan(0);
    const costs = await rows.evaluateAll(
      (trs, column) => trs.map((tr) => tr.children[column]?.textContent ?? ''),
      costColumn,
    );
    expect(costs).toEqual(['$0.18', '$0.12', '$0.06']);
    await expect(rows.first()).toContainText(MODEL);
    await expect(rows.first()).toContainText('e2e-key');
    await expect(rows.first()).toContainText('300');
    await expect(rows.first()).toContainText('30');
    await expect(page.locator('[data-stat="quota"] dd')).toHaveText('$0.36');

    await rows.nth(2).getByRole('button', { name: '展开详情' }).click();
    const details = page.getByRole('row', { name: '日志详情' });
    await expect(details).toBeVisible();
    const fact = (label: string) =>
      details.locator('dl > div', { has: page.getByText(label, { exact: true }) }).locator('dd');
    await expect(fact('模型倍率')).toHaveText('250');
    await expect(fact('补全倍率')).toHaveText('2');
    await expect(fact('分组倍率')).toHaveText('1');
    await expect(fact('渠道信息')).toHaveText('#1 e2e-mock');
    const timeline = details.getByRole('region', { name: '尝试记录' });
    await expect(timeline.getByRole('listitem')).toHaveCount(1);
    await expect(timeline.getByRole('listitem')).toContainText('状态 200');

    await page.getByLabel('模型名称').fill('no-such-model');
    await page.getByRole('button', { name: '查询' }).click();
    await expect(rows).toHaveCount(0);
    await expect(page.getByText('没有日志')).toBeVisible();
  } finally {
    mock.close();
  }
});

test('the admin log table fits 1366 px with cost and details in view; the playground is named', async ({
  page,
  server,
}) => {
  const mock = await startMockUpstream();
  const longModel = 'e2e-model-with-a-rather-long-descriptive-name-2025-preview';
  try {
    await setUp(server);
    const api = await signIn(server);
    await api('PUT', '/api/option/', {
      key: 'ModelRatio',
      value: JSON.stringify({ [MODEL]: 250, [longModel]: 250 }),
    });
    await api('POST', '/api/channel/', {
      name: 'e2e-mock-with-a-long-channel-name',
      type: 1,
      key: 'sk-upstream',
      base_url: mock.base,
      models: `${MODEL},${longModel}`,
      group: 'default',
    });
    await api('PUT', '/api/user/', { id: 1, quota: 50_000_000 });
    const token = await api<{ id: number }>('POST', '/api/token/', {
      name: 'a-token-with-a-long-name',
      remain_quota: 5_000_000,
    });
    const { key } = await api<{ key: string }>('POST', `/api/token/${token.id}/key`, {});
    for (const model of [MODEL, longModel, longModel]) {
      const response = await fetch(`${server.baseURL}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${key}` },
        body: JSON.stringify({ model, messages: [{ role: 'user', content: 'ping' }] }),
      });
      expect(response.status, await response.clone().text()).toBe(200);
    }

    await page.setViewportSize({ width: 1366, height: 768 });
    await page.goto('/login');
    await page.getByLabel('用户名或邮箱').fill(ROOT.username);
    await page.getByLabel('密码').fill(ROOT.password);
    await page.getByRole('button', { name: '登录' }).click();
    await expect(page).toHaveURL(/\/(token|console|$)/);
    // A playground request from the signed-in page (session cookie and New-Api-User).
    // Root is user 1 (the balance above was set on it).
    const played = await page.evaluate(async (model) => {
      const response = await fetch('/pg/chat/completions', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'New-Api-User': '1' },
        body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
      });
      return response.status;
    }, MODEL);
    expect(played).toBe(200);

    const rows = page.locator('tbody tr[data-type="2"]');
    await expect(async () => {
      await page.goto('/log');
      await expect(rows).toHaveCount(4, { timeout: 2_000 });
    }).toPass({ timeout: 20_000 });
    await expect(rows.first()).toContainText('playground');

    const frame = page.locator('.ui-table-frame');
    const fits = async () =>
      frame.evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth }));
    const inView = async (name: string) => {
      const header = await page.getByRole('columnheader', { name, exact: true }).boundingBox();
      const box = await frame.boundingBox();
      expect(header, name).not.toBeNull();
      expect(box).not.toBeNull();
      if (header && box)
        expect(header.x + header.width, name).toBeLessThanOrEqual(box.x + box.width + 1);
    };
    let size = await fits();
    expect(size.scroll, 'no sideways scroll').toBeLessThanOrEqual(size.client);
    await inView('花费');
    await inView('详情');

    await rows.nth(1).getByRole('button', { name: '展开详情' }).click();
    await expect(page.getByRole('row', { name: '日志详情' })).toBeVisible();
    size = await fits();
    expect(size.scroll, 'no sideways scroll with details open').toBeLessThanOrEqual(size.client);
  } finally {
    mock.close();
  }
});
