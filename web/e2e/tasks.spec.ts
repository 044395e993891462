import type { Page } from '@playwright/test';

import { ROOT, setOption, setUp, signIn } from './api';
import type { Caller } from './api';
import { expect, test } from './fixtures';
import { DRAWING_SECONDS, PNG, startMockTasks } from './mock-tasks';

/**
 * The drawing log and the task log in a browser. The first test is end to end: a drawing and
 * a song are submitted through the public relay routes (/mj/submit/imagine, /suno/submit/music)
 * to a Midjourney-proxy and a Suno channel on a mock upstream (`mock-tasks.ts`), the server's
 * poller (every 100 ms here) finishes them, and the pages show what it stored. The 390 px test
 * answers the list calls in the page with tasks in the server's shape.
 */

test.use({ serverArgs: ['--task-poll-interval-ms', '100'] });

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

/** The status of the newest task of a console list (`/api/mj/` or `/api/task/`). */
async function newestStatus(root: Caller, list: string): Promise<string> {
  const { data } = (await root.call(`${list}?p=1&page_size=10`)) as {
    data: { items: { status: string }[] };
  };
  return data.items[0]?.status ?? 'none';
}

test('a drawing and a song submitted through the relay are polled to success and shown with their image and audio', async ({
  page,
  server,
}) => {
  const upstream = await startMockTasks();
  try {
    await setUp(server);
    const root = await signIn(server);
    await setOption(root, 'DrawingEnabled', 'true');
    await setOption(root, 'TaskEnabled', 'true');
    // A Midjourney-proxy (2) and a Suno (36) channel; mj_imagine and suno_music have default
    // prices.
    for (const [type, models] of [
      [2, 'mj_imagine'],
      [36, 'suno_music'],
    ] as const) {
      await root.call('/api/channel/', {
        method: 'POST',
        body: JSON.stringify({
          name: `tasks-${type}`,
          type,
          key: upstream.key,
          base_url: upstream.baseURL,
          models,
          group: 'default',
        }),
      });
    }
    await root.call('/api/user/', {
      method: 'PUT',
      body: JSON.stringify({ id: 1, quota: 50_000_000 }),
    });
    const { data: token } = (await root.call('/api/token/', {
      method: 'POST',
      body: JSON.stringify({ name: 'tasks', remain_quota: 5_000_000, expired_time: -1 }),
    })) as { data: { id: number } };
    const { data: secret } = (await root.call(`/api/token/${token.id}/key`, {
      method: 'POST',
      body: '{}',
    })) as { data: { key: string } };

    const imagine = await fetch(`${server.baseURL}/mj/submit/imagine`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'mj-api-secret': secret.key },
      body: JSON.stringify({ prompt: 'a lighthouse at dawn' }),
    });
    const imagined = (await imagine.json()) as { code: number; result: string };
    expect(imagine.status, JSON.stringify(imagined)).toBe(200);
    expect(imagined).toMatchObject({ code: 1, result: 'mj-e2e-1' });
    const music = await fetch(`${server.baseURL}/suno/submit/music`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${secret.key}` },
      body: JSON.stringify({ prompt: 'a song about the sea' }),
    });
    const composed = (await music.json()) as { code: string; data: string };
    expect(music.status, JSON.stringify(composed)).toBe(200);
    expect(composed).toMatchObject({ code: 'success', data: 'suno-e2e-1' });
    // The poller finishes both.
    await expect.poll(() => newestStatus(root, '/api/mj/'), { timeout: 15_000 }).toBe('SUCCESS');
    await expect.poll(() => newestStatus(root, '/api/task/'), { timeout: 15_000 }).toBe('SUCCESS');

    await logIn(page);
    const menu = page.getByRole('complementary', { name: '侧边菜单' });
    await menu.getByRole('link', { name: '绘图日志' }).click();
    await expect(page).toHaveURL(/\/midjourney$/);
    await expect(page.getByRole('heading', { name: '绘图日志' })).toBeVisible();
    // The callback is off by default: root sees the banner.
    await expect(page.getByText(/当前未开启 Midjourney 回调/)).toBeVisible();
    const row = page.getByRole('row', { name: 'task mj-e2e-1' });
    await expect(row.getByText('成功')).toBeVisible();
    await expect(row.getByText('绘图')).toBeVisible();
    const image = row.getByRole('img', { name: '任务 mj-e2e-1 的结果图片' });
    await expect(image).toBeVisible();
    await expect(image).toHaveAttribute('src', `${upstream.baseURL}/files/mj-e2e-1.png`);
    await expect
      .poll(() =>
        image.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth),
      )
      .toBe(1);
    // The upstream's finish time is 45 s after the mock received the submit; the server's
    // submit time is its own whole second, so a submit across a second boundary shows 46.
    const took = [DRAWING_SECONDS, DRAWING_SECONDS + 1].join('|');
    await expect(row.getByText(new RegExp(`^(${took}) 秒$`))).toBeVisible();

    await menu.getByRole('link', { name: '任务日志' }).click();
    await expect(page).toHaveURL(/\/task$/);
    const songRow = page.getByRole('row', { name: 'task suno-e2e-1' });
    await expect(songRow.getByText('Suno', { exact: true })).toBeVisible();
    await expect(songRow.getByText('生成音乐')).toBeVisible();
    await expect(songRow.getByText('成功')).toBeVisible();
    await expect(songRow.getByLabel('任务 suno-e2e-1 的音频')).toHaveAttribute(
      'src',
      `${upstream.baseURL}/files/suno-e2e-1.mp3`,
    );
    await expect(songRow.getByRole('img', { name: '歌曲' })).toHaveAttribute(
      'src',
      `${upstream.baseURL}/files/suno-e2e-1-cover.png`,
    );
    await expect(songRow.getByRole('img', { name: '歌曲' })).toBeVisible();
    expect(upstream.calls()).toEqual(
      expect.arrayContaining([
        'POST /mj/submit/imagine',
        'POST /mj/task/list-by-condition',
        'POST /suno/submit/music',
        'POST /suno/fetch',
        'GET /files/mj-e2e-1.png',
      ]),
    );
  } finally {
    await upstream.stop();
  }
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
