import type { Page } from '@playwright/test';

import { addChannel, ROOT, setOption, setUp, signIn } from './api';
import { expect, test } from './fixtures';
import { startMockStream } from './mock-stream';

async function logIn(page: Page) {
  await page.goto('/login');
  await page.getByLabel('用户名或邮箱').fill(ROOT.username);
  await page.getByLabel('密码').fill(ROOT.password);
  await page.getByRole('button', { name: '登录' }).click();
  await expect(page).toHaveURL(/\/token$/);
}

/** How far the page is wider than the viewport (the page's own horizontal scroll). */
const OVERFLOW = 'document.documentElement.scrollWidth - window.innerWidth';

/** Every route of spec 01 §2. */
const consoleRoutes = [
  '/',
  '/token',
  '/playground',
  '/channel',
  '/channel/add',
  '/redemption',
  '/user',
  '/user/edit/1',
  '/setting',
  '/personal',
  '/topup',
  '/log',
  '/midjourney',
  '/task',
  '/detail',
  '/pricing',
  '/docs',
  '/about',
  '/chat/0',
  '/no-such-page',
];

for (const width of [1366, 390]) {
  test(`every route renders at ${width} px without overflowing or a placeholder`, async ({
    page,
    server,
  }) => {
    await setUp(server);
    await page.setViewportSize({ width, height: 800 });
    for (const path of ['/login', '/register', '/reset', '/pricing', '/about']) {
      await page.goto(path);
      await expect(page.locator('main')).toBeVisible();
      await expect(page.getByText('此页面正在建设中')).toHaveCount(0);
      const overflow = await page.evaluate(OVERFLOW);
      expect.soft(overflow, `${path} (guest) overflows by ${overflow} px`).toBeLessThanOrEqual(0);
    }
    await logIn(page);
    for (const path of consoleRoutes) {
      await page.goto(path);
      await expect(page.locator('main')).toBeVisible();
      await page.waitForLoadState('networkidle');
      await expect(page.getByText('此页面正在建设中')).toHaveCount(0);
      const overflow = await page.evaluate(OVERFLOW);
      expect.soft(overflow, `${path} overflows by ${overflow} px`).toBeLessThanOrEqual(0);
    }
  });
}

test('a script or an onerror handler in the footer, notice or home content never runs', async ({
  page,
  server,
}) => {
  await setUp(server);
  const root = await signIn(server);
  const payload =
    '<b>safe</b><script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">';
  await setOption(root, 'Footer', `Footer ${payload}`);
  await setOption(root, 'Notice', `Notice ${payload}`);
  await setOption(root, 'About', `About ${payload}`);
  await page.goto('/');
  await expect(page.locator('footer').getByText('safe')).toBeVisible();
  await expect(page.getByRole('dialog').getByText('safe')).toBeVisible();
  await page.goto('/about');
  await expect(page.locator('main').getByText('safe')).toBeVisible();
  await page.waitForLoadState('networkidle');
  expect(await page.evaluate('window.__pwned')).toBeUndefined();
  await expect(page.locator('footer img[onerror], main img[onerror]')).toHaveCount(0);
});

test('the home page shows the notice once per change', async ({ page, server }) => {
  await setUp(server);
  const root = await signIn(server);
  await setOption(root, 'Notice', 'first notice');
  await page.goto('/');
  const dialog = page.getByRole('dialog', { name: '系统公告' });
  await expect(dialog.getByText('first notice')).toBeVisible();
  await dialog.getByRole('button', { name: '关闭' }).first().click();
  await page.reload();
  await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
  await expect(page.getByRole('dialog')).toHaveCount(0);
  await setOption(root, 'Notice', 'second notice');
  await page.reload();
  await expect(page.getByRole('dialog').getByText('second notice')).toBeVisible();
});

test('the playground streams an answer from a channel, and Stop ends a reply', async ({
  page,
  server,
}) => {
  const upstream = await startMockStream(['Hel', 'lo', ' there', ...Array(40).fill('.')], 150);
  try {
    await setUp(server);
    const root = await signIn(server);
    await addChannel(root, upstream.baseURL, 'gpt-4o-mini');
    await logIn(page);
    await page.goto('/playground');
    await expect(page.getByLabel('模型', { exact: true })).toHaveValue('gpt-4o-mini');
    const input = page.getByLabel('输入消息');
    await input.fill('hi');
    await page.getByRole('button', { name: '发送' }).click();
    const reply = page.getByRole('article', { name: '助手' }).last();
    await expect(reply).toContainText('Hello there');
    await expect(reply.locator('[data-message-state="incomplete"]')).toBeVisible();
    await page.getByRole('button', { name: '停止' }).click();
    await expect(reply.locator('[data-message-state="complete"]')).toBeVisible();
    await expect(reply).toContainText('（已停止）');
    await expect(page.getByRole('button', { name: '发送' })).toBeVisible();
  } finally {
    await upstream.stop();
  }
});

test('a chat link opens in a frame with the user key; a script URL is refused', async ({
  page,
  server,
}) => {
  await setUp(server);
  const root = await signIn(server);
  // The server refuses a script URL on save (the console refuses to open one too: safe-url.test.ts).
  await expect(
    setOption(root, 'Chats', JSON.stringify([{ Evil: 'javascript:alert("{key}")' }])),
  ).rejects.toThrow(/400: Chats may not use the javascript: scheme/);
  await setOption(
    root,
    'Chats',
    JSON.stringify([{ Web: 'https://chat.example/?key={key}&server={address}' }]),
  );
  await logIn(page);
  // No enabled token yet: the message, then /token.
  await page.goto('/chat/0');
  await expect(page.getByText(/当前没有可用的启用令牌/)).toBeVisible();
  await expect(page).toHaveURL(/\/token$/);
  await root.call('/api/token/', {
    method: 'POST',
    body: JSON.stringify({ name: 'chat', remain_quota: 500000, expired_time: -1 }),
  });
  await page.goto('/chat/0');
  const frame = page.locator('iframe[title="聊天"]');
  await expect(frame).toHaveAttribute('src', /^https:\/\/chat\.example\/\?key=sk-\w+&server=http/);
  // A link the config does not have.
  await page.goto('/chat/1');
  await expect(page.getByText('聊天链接配置错误，请联系管理员')).toBeVisible();
  await expect(page.locator('iframe')).toHaveCount(0);
  // The side menu lists the chats kept locally.
  await page.goto('/token');
  await expect(page.getByRole('link', { name: 'Web' })).toBeVisible();
});

test('the other tab saves each field on its own and keeps it after a reload', async ({
  page,
  server,
}) => {
  await setUp(server);
  await logIn(page);
  await page.goto('/setting?tab=other');
  const fields: [string, string, string, string][] = [
    ['公告', 'e2e notice', '设置公告', '公告已更新'],
    ['系统名称', 'E2E Gate', '设置系统名称', '系统名称已更新'],
    ['Logo 图片地址', '/favicon.svg', '设置 Logo', 'Logo 已更新'],
    ['首页内容', '# e2e home', '设置首页内容', '首页内容已更新'],
    ['关于', 'e2e about', '设置关于', '关于内容已更新'],
    ['页脚', '<b>e2e footer</b>', '设置页脚', '页脚内容已更新'],
  ];
  for (const [label, value, button, notice] of fields) {
    await page.getByLabel(label, { exact: true }).fill(value);
    await page.getByRole('button', { name: button }).click();
    await expect(page.getByText(notice, { exact: true })).toBeVisible();
  }
  await page.reload();
  for (const [label, value] of fields) {
    await expect(page.getByLabel(label, { exact: true })).toHaveValue(value);
  }
  await expect(page.locator('footer').getByText('e2e footer')).toBeVisible();
  await page.goto('/about');
  await expect(page.locator('main').getByText('e2e about')).toBeVisible();
});

test('the other tab saves a home block after checking its shape, and the top bar shows it', async ({
  page,
  server,
}) => {
  await setUp(server);
  await logIn(page);
  await page.goto('/setting?tab=other');
  const blocks = page.getByRole('region', { name: '首页配置' });
  const links = blocks.getByLabel('自定义导航链接', { exact: true });
  const save = blocks.getByRole('button', { name: '保存自定义导航链接' });
  await links.fill('[{"text": "E2E Docs", "url": "https://docs.example"}]');
  await save.click();
  await expect(blocks.getByText('格式不正确（位置：0.item_key）')).toBeVisible();
  await links.fill('[{"text": "E2E Docs", "item_key": "docs", "url": "https://docs.example"}]');
  await save.click();
  await expect(page.getByText('自定义导航链接已更新', { exact: true })).toBeVisible();
  await page.reload();
  const link = page.getByRole('navigation', { name: '主导航' }).getByRole('link', {
    name: 'E2E Docs',
  });
  await expect(link).toHaveAttribute('href', 'https://docs.example');
  await expect(link).toHaveAttribute('rel', /noopener/);
  await expect(
    page.getByRole('region', { name: '首页配置' }).getByLabel('自定义导航链接'),
  ).toHaveValue(/"item_key": "docs"/);
});
