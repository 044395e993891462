import { ROOT, setUp } from './api';
import { expect, test } from './fixtures';

test('an admin creates a redemption code, redeems it once and the balance grows once', async ({
  page,
  server,
}) => {
  await setUp(server);
  await page.goto('/login');
  await page.getByLabel('用户名或邮箱').fill(ROOT.username);
  await page.getByLabel('密码').fill(ROOT.password);
  await page.getByRole('button', { name: '登录' }).click();
  await expect(page).toHaveURL(/\/token$/);

  await page.goto('/topup');
  const balance = page.getByTestId('balance');
  await expect(balance).toHaveText(/^\$\d+\.\d{2}$/);
  const before = Number((await balance.textContent())?.slice(1));

  await page
    .getByRole('complementary', { name: '侧边菜单' })
    .getByRole('link', { name: '兑换码管理' })
    .click();
  await expect(page.getByRole('heading', { name: '兑换码管理' })).toBeVisible();
  await page.getByRole('button', { name: '添加兑换码' }).click();
  const drawer = page.getByRole('dialog', { name: '创建新的兑换码' });
  await drawer.getByLabel('名称').fill('e2e-gift');
  await drawer.getByRole('button', { name: '$10.00' }).click();
  await drawer.getByRole('button', { name: '提交' }).click();
  const created = page.getByRole('dialog', { name: '兑换码创建成功' });
  await expect(created).toBeVisible();
  const code = (await created.getByLabel('生成的兑换码').inputValue()).trim();
  expect(code).toMatch(/^[0-9a-f]{32}$/);
  const download = page.waitForEvent('download');
  await created.getByRole('button', { name: '下载' }).click();
  expect((await download).suggestedFilename()).toBe('e2e-gift.txt');
  const row = page.getByRole('row', { name: /e2e-gift/ });
  await expect(row.getByText('未使用')).toBeVisible();

  await page.goto('/topup');
  await page.getByLabel('兑换码').fill(code);
  await page.getByRole('button', { name: '兑换', exact: true }).click();
  await expect(page.getByText('兑换成功！成功兑换额度：$10.00', { exact: true })).toBeVisible();
  await expect(balance).toHaveText(`$${(before + 10).toFixed(2)}`);

  await page.getByLabel('兑换码').fill(code);
  await page.getByRole('button', { name: '兑换', exact: true }).click();
  await expect(page.getByText('该兑换码已被使用', { exact: true })).toBeVisible();
  await expect(balance, 'a used code adds nothing').toHaveText(`$${(before + 10).toFixed(2)}`);

  await page.goto('/redemption');
  const usedRow = page.getByRole('row', { name: /e2e-gift/ });
  await expect(usedRow.getByText('已使用')).toBeVisible();
  await expect(usedRow.getByRole('button', { name: '启用' })).toBeDisabled();
  await expect(usedRow.getByRole('button', { name: '编辑' })).toBeDisabled();
});
