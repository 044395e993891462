import type { Page } from '@playwright/test';

import { ROOT, setUp } from './api';
import { expect, test } from './fixtures';
import { MOCK_REPLY, startMockUpstream } from './mock-upstream';

async function logIn(page: Page) {
  await page.goto('/login');
  await page.getByLabel('用户名或邮箱').fill(ROOT.username);
  await page.getByLabel('密码').fill(ROOT.password);
  await page.getByRole('button', { name: '登录' }).click();
  await expect(page).toHaveURL(/\/token$/);
}

/** A console API call with the browser's session (cookie + New-Api-User). */
async function consoleCall(page: Page, method: 'POST' | 'PUT', path: string, data: unknown) {
  // The e2e project has no DOM types: the page evaluates a string.
  const stored = await page.evaluate<string | null>("localStorage.getItem('user')");
  const userId = (JSON.parse(stored ?? '{}') as { id?: number }).id;
  const response = await page.request.fetch(path, {
    method,
    data,
    headers: { 'New-Api-User': String(userId) },
  });
  const body = (await response.json()) as { success: boolean; message: string };
  expect(body.success, `${path}: ${body.message}`).toBe(true);
}

async function chat(baseURL: string, key: string) {
  return fetch(`${baseURL}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${key}` },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
  });
}

test('a user creates a key, copies it, calls the API with it, disables it and is refused', async ({
  page,
  context,
  server,
}, testInfo) => {
  const upstream = await startMockUpstream();
  try {
    await setUp(server);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], {
      origin: server.baseURL,
    });
    await logIn(page);
    await consoleCall(page, 'POST', '/api/channel/', {
      name: 'e2e-mock',
      type: 1,
      key: 'upstream-key',
      base_url: upstream.baseURL,
      models: 'gpt-4o-mini',
      group: 'default',
    });

    await page.goto('/pricing');
    const priced = page.getByRole('row', { name: 'gpt-4o-mini' });
    await expect(priced.getByText('按量计费')).toBeVisible();
    await expect(priced.getByText(/^提示 ¥[\d.]+ \/ 1M tokens$/)).toBeVisible();
    await page.screenshot({ path: testInfo.outputPath('pricing.png'), fullPage: true });

    await page.goto('/token');
    await expect(page.getByText(/令牌无法精确控制使用额度/)).toBeVisible();
    await page.getByRole('button', { name: '添加令牌' }).click();
    const drawer = page.getByRole('dialog', { name: '创建新的令牌' });
    await drawer.getByRole('button', { name: '提交' }).click();
    await expect(drawer.getByText('请输入令牌名称')).toBeVisible();
    await drawer.getByLabel('名称').fill('e2e-key');
    await page.screenshot({ path: testInfo.outputPath('token-drawer.png') });
    await drawer.getByRole('button', { name: '提交' }).click();
    await expect(
      page.getByText('令牌创建成功，请在列表页面点击复制获取令牌！', { exact: true }),
    ).toBeVisible();
    await expect(drawer).toBeHidden();

    const row = page.getByRole('row', { name: 'e2e-key' });
    await expect(row.getByText('已启用')).toBeVisible();
    await expect(row.getByText(/^sk-\w{4}\*+\w{4}$/)).toBeVisible();
    await row.getByRole('button', { name: '复制' }).click();
    await expect(page.getByText('已复制到剪贴板！', { exact: true })).toBeVisible();
    await page.screenshot({ path: testInfo.outputPath('tokens.png') });
    const key = await page.evaluate<string>('navigator.clipboard.readText()');
    expect(key, 'the full key was copied').toMatch(/^sk-[A-Za-z0-9]{48}$/);

    const ok = await chat(server.baseURL, key);
    expect(ok.status, 'the new key works').toBe(200);
    const completion = (await ok.json()) as { choices: { message: { content: string } }[] };
    expect(completion.choices[0]?.message.content).toBe(MOCK_REPLY);
    expect(upstream.calls()).toBe(1);

    await row.getByRole('button', { name: '禁用' }).click();
    await expect(page.getByText('操作成功完成！', { exact: true }).first()).toBeVisible();
    await expect(row.getByText('已禁用')).toBeVisible();
    await expect(row).toHaveAttribute('data-state', 'off');

    const refused = await chat(server.baseURL, key);
    expect(refused.ok, 'the disabled key is refused on the next call').toBe(false);
    expect([401, 403]).toContain(refused.status);
    expect(upstream.calls(), 'the refused call never reached the upstream').toBe(1);

    await row.getByRole('button', { name: '启用' }).click();
    await expect(row.getByText('已启用')).toBeVisible();
    expect((await chat(server.baseURL, key)).status, 'enabled again, it works again').toBe(200);
  } finally {
    await upstream.stop();
  }
});
