import { ROOT, setUp } from './api';
import { expect, test } from './fixtures';
import { startMockUpstream } from './mock-upstream';
import type { TollgateServer } from './tollgate-server';

/** A model the mock channel serves and nothing prices yet. */
const MODEL = 'e2e-unpriced';

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

test('a model without a ratio is priced from the settings and its next request is billed by it', async ({
  page,
  server,
}) => {
  const mock = await startMockUpstream();
  try {
    await setUp(server);
    const api = await signIn(server);
    await api('POST', '/api/channel/', {
      name: 'e2e-mock',
      type: 1,
      key: 'sk-upstream',
      base_url: mock.baseURL,
      models: MODEL,
      group: 'default',
    });
    await api('PUT', '/api/user/', { id: 1, quota: 50_000_000 });
    const token = await api<{ id: number }>('POST', '/api/token/', {
      name: 'e2e-key',
      remain_quota: 5_000_000,
    });
    const { key } = await api<{ key: string }>('POST', `/api/token/${token.id}/key`, {});
    const chat = () =>
      fetch(`${server.baseURL}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${key}` },
        body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'ping' }] }),
      });

    // Unpriced: the relay refuses the model.
    const refused = await chat();
    expect(refused.status, await refused.clone().text()).toBe(400);
    expect(mock.calls()).toBe(0);

    await page.goto('/login');
    await page.getByLabel('用户名或邮箱').fill(ROOT.username);
    await page.getByLabel('密码').fill(ROOT.password);
    await page.getByRole('button', { name: '登录' }).click();
    await expect(page).toHaveURL(/\/(token|console|$)/);

    await page.goto('/setting');
    await page.getByRole('tab', { name: '未设置倍率模型' }).click();
    const unset = page.getByRole('region', { name: '未设置倍率模型' });
    const row = unset.getByRole('row', { name: new RegExp(MODEL) });
    await expect(row).toBeVisible();
    await row.getByRole('button', { name: `设置 ${MODEL} 的价格` }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('模型倍率').fill('250');
    await dialog.getByLabel('补全倍率').fill('3');
    await dialog.getByRole('button', { name: '确定' }).click();
    await expect(page.getByText('保存成功', { exact: true })).toBeVisible();
    await expect(dialog).toBeHidden();
    await expect(unset.getByText('所有已启用的模型都已设置价格')).toBeVisible();

    // The visual editor lists the new price.
    await page.getByRole('tab', { name: '可视化倍率设置' }).click();
    const editor = page.getByRole('region', { name: '可视化倍率设置' });
    const priced = editor.getByRole('row', { name: new RegExp(MODEL) });
    await expect(priced.getByRole('cell').nth(2)).toHaveText('250');
    await expect(priced.getByRole('cell').nth(3)).toHaveText('3');

    // The next request is billed by it: (1 prompt + 1 completion × 3) × 250 = 1000 quota.
    const answered = await chat();
    expect(answered.status, await answered.clone().text()).toBe(200);
    await expect(async () => {
      const logs = await api<{ items: { quota: number; model_name: string }[] }>(
        'GET',
        `/api/log/?model_name=${MODEL}&type=2`,
      );
      expect(logs.items.map((l) => l.quota)).toEqual([1000]);
    }).toPass({ timeout: 20_000 });
  } finally {
    await mock.stop();
  }
});
