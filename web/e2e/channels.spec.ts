import { ROOT, setUp } from './api';
import { expect, test } from './fixtures';

test('an admin adds a channel, sees it in the list, disables it and deletes it', async ({
  page,
  server,
}) => {
  await setUp(server);
  await page.goto('/login');
  await page.getByLabel('用户名或邮箱').fill(ROOT.username);
  await page.getByLabel('密码').fill(ROOT.password);
  await page.getByRole('button', { name: '登录' }).click();
  await expect(page).toHaveURL(/\/(token|console|$)/);

  await page.goto('/channel/add');
  await expect(page.getByLabel('类型')).toHaveValue('1');
  await page.getByLabel('名称').fill('e2e-openai');
  await page.getByRole('button', { name: '提交' }).click();
  await expect(page.getByText('请填写渠道密钥')).toBeVisible();
  await expect(page.getByText('请至少选择一个模型')).toBeVisible();
  await page.getByRole('textbox', { name: '密钥' }).fill('sk-e2e');
  await page.getByPlaceholder('输入模型名称').fill('gpt-4o');
  await page.getByRole('button', { name: '添加', exact: true }).click();
  await page.getByRole('button', { name: '提交' }).click();
  await expect(page.getByText('渠道创建成功', { exact: true })).toBeVisible();
  await expect(page).toHaveURL(/\/channel$/);

  const row = page.getByRole('row', { name: 'e2e-openai' });
  await expect(row).toBeVisible();
  await expect(row.getByText('OpenAI', { exact: true })).toBeVisible();
  await expect(row.getByText('已启用')).toBeVisible();

  await row.getByRole('button', { name: '禁用' }).click();
  await expect(row.getByText('已禁用')).toBeVisible();
  await expect(row).toHaveAttribute('data-state', 'off');
  await expect(row.getByRole('button', { name: '启用' })).toBeVisible();

  await row.getByRole('button', { name: '删除' }).click();
  await page.getByRole('dialog').getByRole('button', { name: '删除' }).click();
  await expect(page.getByText('渠道已删除', { exact: true })).toBeVisible();
  await expect(page.getByRole('row', { name: 'e2e-openai' })).toHaveCount(0);
});
