import { expect, test } from './fixtures';
import type { TollgateServer } from './tollgate-server';

async function setupDone(server: TollgateServer): Promise<boolean> {
  const body = (await (await fetch(`${server.baseURL}/api/status`)).json()) as {
    data: { setup: boolean };
  };
  return body.data.setup;
}

test('a fresh server sends every page to setup, validates it, and initializes', async ({
  page,
  server,
}) => {
  await page.goto('/token');
  await expect(page, 'setup not done: any path leads to /setup').toHaveURL(/\/setup$/);
  await expect(page.getByRole('heading', { name: '系统初始化' })).toBeVisible();
  await expect(page.getByText(/tollgate\.redb/).first()).toBeVisible();

  const password = page.getByLabel('密码', { exact: true });
  const confirm = page.getByLabel('确认密码');
  const submit = page.getByRole('button', { name: '初始化系统' });

  await page.getByLabel('用户名').fill('root');
  await password.fill('short');
  await confirm.fill('short');
  await submit.click();
  await expect(page.getByText('密码长度至少为8个字符')).toBeVisible();
  expect(await setupDone(server), 'an invalid form is not sent').toBe(false);

  await password.fill('correct-horse-42');
  await confirm.fill('correct-horse-4');
  await expect(page.getByText('两次输入的密码不一致')).toBeVisible();
  await confirm.fill('correct-horse-42');
  await expect(page.getByText('密码长度至少为8个字符')).toBeHidden();
  await submit.click();

  await expect(page.getByText('系统初始化成功，正在跳转...')).toBeVisible();
  await expect(page, 'the page reloads on /').toHaveURL(`${server.baseURL}/`);
  expect(await setupDone(server), 'GET /api/status reports setup done').toBe(true);

  await page.goto('/setup');
  await expect(page, 'setup done: /setup leads home').toHaveURL(`${server.baseURL}/`);

  await page.goto('/token');
  await expect(page, 'a guest is sent to sign in').toHaveURL(/\/login$/);
  await page.getByLabel('用户名或邮箱').fill('root');
  await page.getByLabel('密码').fill('correct-horse-42');
  await page.getByRole('button', { name: '登录' }).click();
  await expect(page, 'password login lands on /token').toHaveURL(/\/token$/);
  await expect(page.getByRole('heading', { name: 'API 令牌' })).toBeVisible();
  await expect(page.getByRole('complementary', { name: '侧边菜单' })).toBeVisible();
});
