import { ROOT, setUp } from './api';
import { expect, test } from './fixtures';
import { startMockUpstream } from './mock-upstream';

test('an admin adds a channel, sees it in the list, disables and enables it, and deletes it', async ({
  page,
  server,
}) => {
  await setUp(server);
  await page.goto('/login');
  await page.getByLabel('用户名或邮箱').fill(ROOT.username);
  await page.getByLabel('密码').fill(ROOT.password);
  await page.getByRole('button', { name: '登录' }).click();
  await expect(page).toHaveURL(/\/(token|console|$)/);

  // /channel/add opens the editor drawer over the list
  await page.goto('/channel/add');
  const editor = page.getByRole('dialog', { name: '添加渠道' });
  await expect(editor.getByLabel('类型')).toHaveValue('1');
  await editor.getByLabel('名称').fill('e2e-openai');
  await editor.getByRole('button', { name: '提交' }).click();
  await expect(editor.getByText('请填写渠道密钥')).toBeVisible();
  await expect(editor.getByText('请至少选择一个模型')).toBeVisible();
  await editor.getByRole('textbox', { name: '密钥' }).fill('sk-e2e');
  await editor.getByPlaceholder('输入模型名称').fill('gpt-4o');
  await editor.getByRole('button', { name: '添加', exact: true }).click();
  await editor.getByRole('button', { name: '提交' }).click();
  await expect(page.getByText('渠道创建成功', { exact: true })).toBeVisible();
  await expect(editor).toHaveCount(0);
  await expect(page).toHaveURL(/\/channel$/);

  const row = page.getByRole('row', { name: 'e2e-openai' });
  await expect(row).toBeVisible();
  await expect(row.getByText('OpenAI', { exact: true })).toBeVisible();
  await expect(row.getByText('已启用')).toBeVisible();

  await row.getByRole('button', { name: '禁用' }).click();
  await expect(row.getByText('已禁用')).toBeVisible();
  await expect(row).toHaveAttribute('data-state', 'off');
  await row.getByRole('button', { name: '启用' }).click();
  await expect(row.getByText('已启用')).toBeVisible();
  await expect(row.getByRole('button', { name: '禁用' })).toBeVisible();

  await row.getByRole('button', { name: '删除' }).click();
  await page.getByRole('dialog').getByRole('button', { name: '删除' }).click();
  await expect(page.getByText('渠道已删除', { exact: true })).toBeVisible();
  await expect(page.getByRole('row', { name: 'e2e-openai' })).toHaveCount(0);
});

test('the editor is a drawer over the list; balance and test-all answer from the server', async ({
  page,
  server,
}) => {
  await setUp(server);
  await page.goto('/login');
  await page.getByLabel('用户名或邮箱').fill(ROOT.username);
  await page.getByLabel('密码').fill(ROOT.password);
  await page.getByRole('button', { name: '登录' }).click();
  await expect(page).toHaveURL(/\/(token|console|$)/);

  await page.goto('/channel');
  await page.getByRole('link', { name: '添加渠道' }).click();
  await expect(page).toHaveURL(/\/channel\/add$/);
  const drawer = page.getByRole('dialog', { name: '添加渠道' });
  await expect(drawer).toBeVisible();
  await drawer.getByRole('button', { name: '取消' }).click();
  await expect(drawer).toHaveCount(0);
  await expect(page).toHaveURL(/\/channel$/);

  await page.getByRole('link', { name: '添加渠道' }).click();
  await drawer.getByLabel('类型').selectOption('14');
  await drawer.getByLabel('名称').fill('e2e-claude');
  // an address that refuses at once: nothing leaves the machine
  await drawer.getByLabel('代理地址').fill('http://127.0.0.1:9');
  await drawer.getByRole('textbox', { name: '密钥' }).fill('sk-ant-e2e');
  await drawer.getByPlaceholder('输入模型名称').fill('claude-sonnet-4');
  await drawer.getByRole('button', { name: '添加', exact: true }).click();
  await drawer.getByRole('button', { name: '提交' }).click();
  await expect(page.getByText('渠道创建成功', { exact: true })).toBeVisible();
  await expect(drawer).toHaveCount(0);
  await expect(page).toHaveURL(/\/channel$/);

  const row = page.getByRole('row', { name: 'e2e-claude' });
  await row.getByRole('button', { name: '更新 e2e-claude 的余额' }).click();
  // the server's refusal (balance_unsupported) in the reader's language, not the server's English
  await expect(
    page.getByText('渠道 e2e-claude 余额更新失败：此渠道类型不支持查询余额', { exact: true }),
  ).toBeVisible();

  await row.getByRole('link', { name: '编辑' }).click();
  await expect(page).toHaveURL(/\/channel\/edit\/\d+$/);
  const editor = page.getByRole('dialog', { name: '编辑渠道' });
  await expect(editor.getByLabel('名称')).toHaveValue('e2e-claude');
  await page.keyboard.press('Escape');
  await expect(editor).toHaveCount(0);
  await expect(page).toHaveURL(/\/channel$/);

  await page.getByRole('button', { name: '测试所有渠道' }).click();
  await page
    .getByRole('dialog', { name: '测试所有渠道' })
    .getByRole('button', { name: '开始测试' })
    .click();
  await expect(
    page.getByText('已开始在后台测试 1 个渠道，列表会在一分钟内自动刷新结果', { exact: true }),
  ).toBeVisible();
});

test('a channel on a local mock upstream is tested (response time shown) and its priority edited in place', async ({
  page,
  server,
}) => {
  const upstream = await startMockUpstream();
  try {
    await setUp(server);
    await page.goto('/login');
    await page.getByLabel('用户名或邮箱').fill(ROOT.username);
    await page.getByLabel('密码').fill(ROOT.password);
    await page.getByRole('button', { name: '登录' }).click();
    await expect(page).toHaveURL(/\/(token|console|$)/);

    await page.goto('/channel/add');
    const editor = page.getByRole('dialog', { name: '添加渠道' });
    await editor.getByLabel('名称').fill('e2e-mock');
    await editor.getByLabel('代理地址').fill(upstream.baseURL);
    await editor.getByRole('textbox', { name: '密钥' }).fill('sk-mock');
    await editor.getByPlaceholder('输入模型名称').fill('gpt-4o');
    await editor.getByRole('button', { name: '添加', exact: true }).click();
    await editor.getByRole('button', { name: '提交' }).click();
    await expect(page.getByText('渠道创建成功', { exact: true })).toBeVisible();

    const row = page.getByRole('row', { name: 'e2e-mock' });
    await expect(row.getByText('未测试')).toBeVisible();
    await row.getByRole('button', { name: '测试' }).click();
    const dialog = page.getByRole('dialog', { name: '测试渠道 e2e-mock' });
    await dialog.getByRole('button', { name: '测试' }).click();
    await expect(page.getByText(/^渠道 e2e-mock 测试成功，耗时 [\d.]+ 秒$/)).toBeVisible();
    expect(upstream.calls()).toBe(1);
    // The test dialog closes once the test has answered (issue 20 item 7).
    await expect(dialog).toHaveCount(0);
    await expect(row.locator('[data-response="green"]')).toHaveText(/^[\d.]+ 秒$/);

    const priority = row.getByLabel('e2e-mock 的优先级');
    await priority.fill('5');
    await priority.press('Enter');
    await expect(page.getByText('保存成功', { exact: true })).toBeVisible();
    await page.reload();
    await expect(
      page.getByRole('row', { name: 'e2e-mock' }).getByLabel('e2e-mock 的优先级'),
    ).toHaveValue('5');
  } finally {
    await upstream.stop();
  }
});
