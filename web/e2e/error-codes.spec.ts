import { ROOT, setUp } from './api';
import { expect, test } from './fixtures';

test("a server refusal reaches a Chinese toast in the reader's language, not the server's English", async ({
  page,
  server,
}) => {
  await setUp(server);
  await page.goto('/login');
  await page.getByLabel('用户名或邮箱').fill(ROOT.username);
  await page.getByLabel('密码').fill(ROOT.password);
  await page.getByRole('button', { name: '登录' }).click();
  await expect(page).not.toHaveURL(/\/login/);

  await page.goto('/setting?tab=other');
  await expect(page.getByText(/不接受 data: 等内嵌图片/), 'the Logo field says so').toBeVisible();
  await page.getByLabel('Logo 图片地址').fill('data:image/png;base64,iVBORw0KGgo=');
  await page.getByRole('button', { name: '设置 Logo' }).click();
  // The server answers detail option_refused_scheme with args [Logo, data:].
  await expect(
    page.getByText('Logo 更新失败: Logo 不能使用 data: 协议', { exact: true }),
  ).toBeVisible();
  await expect(page.getByText(/may not use the data: scheme/)).toHaveCount(0);
});
