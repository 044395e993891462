import type { Page } from '@playwright/test';

import { ROOT, setOption, setUp, signIn } from './api';
import { expect, test } from './fixtures';

/**
 * The drawing log and the task log in a browser. The submit routes that create tasks do not
 * exist yet (they come with the relay spine), so the list calls are answered here with tasks
 * in the server's shape (`tests/task_poll.rs` checks the server's lists against mock upstreams);
 * the menu entries, the options that show them, sign-in and the rest are the real server's.
 */

/** A 1×1 PNG, served as the drawing and the song cover. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

const drawing = {
  id: 1,
  code: 1,
  user_id: 1,
  username: 'root',
  action: 'IMAGINE',
  mj_id: 'mj-e2e',
  prompt: 'a lighthouse at dawn',
  prompt_en: 'a lighthouse at dawn',
  submit_time: Date.now() - 90_000,
  finish_time: Date.now() - 45_000,
  image_url: 'https://cdn.e2e.test/lighthouse.png',
  status: 'SUCCESS',
  progress: '100%',
  fail_reason: '',
  channel_id: 2,
  quota: 50_000,
  refunded: false,
};

const song = {
  id: 2,
  task_id: 'suno-e2e',
  platform: 'suno',
  user_id: 1,
  username: 'root',
  channel_id: 3,
  quota: 50_000,
  action: 'MUSIC',
  status: 'SUCCESS',
  submit_time: Math.floor(Date.now() / 1000) - 120,
  finish_time: Math.floor(Date.now() / 1000) - 30,
  progress: '100%',
  image_url: 'https://cdn.e2e.test/cover.png',
  result_url: 'https://cdn.e2e.test/song.mp3',
  data: '',
};

const page1 = (items: unknown[]) =>
  JSON.stringify({ success: true, message: '', data: { items, page: 1, page_size: 10, total: 1 } });

async function answerLists(page: Page) {
  await page.route('**/api/mj/**', (route) =>
    route.fulfill({ contentType: 'application/json', body: page1([drawing]) }),
  );
  await page.route(/\/api\/task\/(\?|$)/, (route) =>
    route.fulfill({ contentType: 'application/json', body: page1([song]) }),
  );
  await page.route('https://cdn.e2e.test/**', (route) =>
    route.request().url().endsWith('.png')
      ? route.fulfill({ contentType: 'image/png', body: PNG })
      : route.fulfill({ contentType: 'audio/mpeg', body: Buffer.alloc(0) }),
  );
}

async function logIn(page: Page) {
  await page.goto('/login');
  await page.getByLabel('用户名或邮箱').fill(ROOT.username);
  await page.getByLabel('密码').fill(ROOT.password);
  await page.getByRole('button', { name: '登录' }).click();
  await expect(page).toHaveURL(/\/token$/);
}

test('the drawing log shows a finished drawing with its image, the task log a finished song', async ({
  page,
  server,
}) => {
  await setUp(server);
  const root = await signIn(server);
  await setOption(root, 'DrawingEnabled', 'true');
  await setOption(root, 'TaskEnabled', 'true');
  await answerLists(page);
  await logIn(page);

  const menu = page.getByRole('complementary', { name: '侧边菜单' });
  await menu.getByRole('link', { name: '绘图日志' }).click();
  await expect(page).toHaveURL(/\/midjourney$/);
  await expect(page.getByRole('heading', { name: '绘图日志' })).toBeVisible();
  // The callback is off by default: root sees the banner.
  await expect(page.getByText(/当前未开启 Midjourney 回调/)).toBeVisible();
  const row = page.getByRole('row', { name: 'task mj-e2e' });
  await expect(row.getByText('成功')).toBeVisible();
  await expect(row.getByText('绘图')).toBeVisible();
  const image = row.getByRole('img', { name: '任务 mj-e2e 的结果图片' });
  await expect(image).toBeVisible();
  expect(
    await image.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth),
  ).toBe(1);
  await expect(row.getByText('45 秒')).toBeVisible();

  await menu.getByRole('link', { name: '任务日志' }).click();
  await expect(page).toHaveURL(/\/task$/);
  const songRow = page.getByRole('row', { name: 'task suno-e2e' });
  await expect(songRow.getByText('Suno', { exact: true })).toBeVisible();
  await expect(songRow.getByText('生成音乐')).toBeVisible();
  await expect(songRow.getByText('成功')).toBeVisible();
  await expect(songRow.getByLabel('任务 suno-e2e 的音频')).toHaveAttribute(
    'src',
    'https://cdn.e2e.test/song.mp3',
  );
  await expect(songRow.getByRole('img', { name: '歌曲' })).toBeVisible();
});

test('both task pages fit a 390 px screen', async ({ page, server }) => {
  await setUp(server);
  await answerLists(page);
  await page.setViewportSize({ width: 390, height: 800 });
  await logIn(page);
  for (const path of ['/midjourney', '/task']) {
    await page.goto(path);
    await expect(page.getByRole('row', { name: /^task / })).toBeVisible();
    const overflow = await page.evaluate(
      'document.documentElement.scrollWidth - window.innerWidth',
    );
    expect(overflow, `${path} overflows by ${overflow} px`).toBeLessThanOrEqual(0);
  }
});
