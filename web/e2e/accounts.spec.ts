import type { Page } from '@playwright/test';

import { registerUser, ROOT, setUp } from './api';
import { expect, test } from './fixtures';

async function logIn(page: Page, username: string, password: string) {
  await page.goto('/login');
  await page.getByLabel('用户名或邮箱').fill(username);
  await page.getByLabel('密码').fill(password);
  await page.getByRole('button', { name: '登录' }).click();
}

test('a visitor registers, logs in, changes the password, logs out and logs in with the new one', async ({
  page,
  server,
}) => {
  await setUp(server);

  await page.goto('/register');
  await page.getByLabel('用户名').fill('alice');
  await page.getByLabel('密码', { exact: true }).fill('short');
  await page.getByLabel('确认密码').fill('short');
  await page.getByRole('button', { name: '注册' }).click();
  await expect(page.getByText('密码长度不得小于 8 位！')).toBeVisible();
  await page.getByLabel('密码', { exact: true }).fill('alice-pass-1');
  await page.getByLabel('确认密码').fill('alice-pass-1');
  await page.getByRole('button', { name: '注册' }).click();
  await expect(page.getByText('注册成功！', { exact: true })).toBeVisible();
  await expect(page, 'registration leads to sign-in').toHaveURL(/\/login$/);

  await logIn(page, 'alice', 'alice-pass-1');
  await expect(page, 'password login lands on /token').toHaveURL(/\/token$/);

  await page.goto('/personal');
  await expect(page.getByText('@alice')).toBeVisible();
  await page.getByLabel('原密码').fill('alice-pass-1');
  await page.getByLabel('新密码', { exact: true }).fill('alice-pass-2');
  await page.getByLabel('确认新密码').fill('alice-pass-2');
  await page.getByRole('button', { name: '修改密码' }).click();
  await expect(page.getByText('密码修改成功！', { exact: true })).toBeVisible();

  await page.getByRole('button', { name: '用户菜单' }).click();
  await page.getByRole('menuitem', { name: '退出登录' }).click();
  await expect(page.getByText('注销成功！', { exact: true })).toBeVisible();
  await expect(page).toHaveURL(/\/login$/);

  await logIn(page, 'alice', 'alice-pass-1');
  await expect(page.getByText('用户名或密码错误，或用户已被封禁', { exact: true })).toBeVisible();
  await expect(page, 'the old password no longer works').toHaveURL(/\/login$/);

  await logIn(page, 'alice', 'alice-pass-2');
  await expect(page, 'the new password works').toHaveURL(/\/token$/);
});

test('an admin disables a user, whose next call fails and who cannot log in again', async ({
  page,
  browser,
  server,
}) => {
  await setUp(server);
  await registerUser(server, 'bob', 'bob-pass-123');

  const bobContext = await browser.newContext({ baseURL: server.baseURL });
  const bob = await bobContext.newPage();
  await logIn(bob, 'bob', 'bob-pass-123');
  await expect(bob).toHaveURL(/\/token$/);

  await logIn(page, ROOT.username, ROOT.password);
  await expect(page).toHaveURL(/\/token$/);
  await page
    .getByRole('complementary', { name: '侧边菜单' })
    .getByRole('link', { name: '用户管理' })
    .click();
  await expect(page.getByRole('heading', { name: '管理用户' })).toBeVisible();
  const row = page.getByRole('row', { name: 'bob' });
  await expect(row.getByText('已激活')).toBeVisible();
  await row.getByRole('button', { name: '禁用' }).click();
  await expect(page.getByText('操作成功完成！', { exact: true })).toBeVisible();
  await expect(row.getByText('已封禁')).toBeVisible();
  await expect(row.getByRole('button', { name: '启用' })).toBeVisible();

  await bob.goto('/personal');
  await expect(bob.getByText('用户已被封禁').first(), 'the next call is refused').toBeVisible();

  await bob.getByRole('button', { name: '用户菜单' }).click();
  await bob.getByRole('menuitem', { name: '退出登录' }).click();
  await logIn(bob, 'bob', 'bob-pass-123');
  await expect(bob.getByText(/用户已被封禁|用户名或密码错误/).first()).toBeVisible();
  await expect(bob, 'a banned user cannot log in').toHaveURL(/\/login$/);
  await bobContext.close();
});

test('the login page loads under the Content-Security-Policy without a violation', async ({
  page,
  server,
}) => {
  await setUp(server);
  const violations: string[] = [];
  page.on('console', (message) => {
    if (/Content.Security.Policy|Refused to/i.test(message.text())) violations.push(message.text());
  });
  const response = await page.goto('/login');
  const policy = response?.headers()['content-security-policy'] ?? '';
  expect(policy).toContain("script-src 'self'");
  expect(policy).toContain("frame-ancestors 'none'");
  await expect(page.getByRole('button', { name: '登录' })).toBeVisible();
  await logIn(page, ROOT.username, ROOT.password);
  await expect(page).not.toHaveURL(/\/login$/);
  expect(violations).toEqual([]);
});
