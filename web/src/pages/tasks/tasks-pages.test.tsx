import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';

import { useSession } from '@/stores/session';
import { mockApi, statusData } from '@/test/api-mock';
import type { MockAnswer, RecordedCall } from '@/test/api-mock';
import { renderApp } from '@/test/render-app';
import { makeUser } from '@/test/users';

import { defaultTaskWindow } from './constants';

const root = makeUser({ id: 1, username: 'root', role: 100 });
const alice = makeUser({ id: 2, username: 'alice' });

/** 2026-01-10 12:00:00 UTC. */
const NOW = 1_768_046_400_000;

const ok = (data: unknown) => ({ body: { success: true, message: '', data } });
const page = (items: unknown[], total = items.length) =>
  ok({ items, page: 1, page_size: 10, total });

const drawn = {
  id: 1,
  code: 1,
  user_id: 2,
  username: 'alice',
  action: 'IMAGINE',
  mj_id: 'mj-100',
  prompt: 'a cat in a hat',
  prompt_en: 'a cat in a hat',
  submit_time: 1_768_040_000_000,
  finish_time: 1_768_040_061_000,
  image_url: 'https://cdn.example/cat.png',
  status: 'SUCCESS',
  progress: '100%',
  fail_reason: '',
  channel_id: 4,
  quota: 50_000,
  refunded: false,
};
const failed = {
  ...drawn,
  id: 2,
  code: 22,
  action: 'UPSCALE',
  mj_id: 'mj-101',
  finish_time: 1_768_040_030_000,
  image_url: '',
  status: 'FAILURE',
  progress: '40%',
  fail_reason: 'banned prompt',
  refunded: true,
};

const song = {
  id: 3,
  task_id: 'suno-1',
  platform: 'suno',
  user_id: 2,
  username: 'alice',
  channel_id: 6,
  quota: 50_000,
  action: 'MUSIC',
  status: 'SUCCESS',
  submit_time: 1_768_040_000,
  finish_time: 1_768_040_090,
  progress: '100%',
  image_url: 'https://cdn.example/cover.png',
  result_url: 'https://cdn.example/song.mp3',
};
const submitting = { ...song, id: 4, task_id: 'suno-2', status: '', result_url: '' };
const queued = { ...song, id: 5, task_id: 'suno-3', status: 'QUEUED', result_url: '' };
const odd = { ...song, id: 6, task_id: 'suno-4', status: 'WHATEVER', result_url: '' };

function setUp(
  user = root,
  status: Record<string, unknown> = {},
  extra: Record<string, MockAnswer> = {},
) {
  vi.spyOn(Date, 'now').mockReturnValue(NOW);
  useSession.getState().setUser(user);
  const admin = user.role >= 10;
  return mockApi({
    'GET /api/status': {
      body: statusData({
        display_in_currency: true,
        quota_per_unit: 500_000,
        enable_drawing: true,
        enable_task: true,
        ...status,
      }),
    },
    [admin ? 'GET /api/mj/' : 'GET /api/mj/self/']: page([drawn, failed], 12),
    [admin ? 'GET /api/task/' : 'GET /api/task/self']: page([song, submitting, queued, odd]),
    ...extra,
  });
}

const urls = (calls: RecordedCall[], path: string) =>
  calls.filter((c) => c.url.split('?')[0] === path).map((c) => c.url);

const headers = () =>
  screen.getAllByRole('columnheader', { hidden: true }).map((th) => th.textContent);

afterEach(() => {
  useSession.getState().clearUser();
});

describe('drawing log', () => {
  it('a user sees their drawings of the last 30 days, labelled, without channel or banner', async () => {
    const calls = setUp(alice);
    renderApp('/midjourney');
    expect(await screen.findByRole('heading', { name: '绘图日志' })).toBeTruthy();
    const row = await screen.findByRole('row', { name: 'task mj-100' });
    const start = NOW / 1000 - 30 * 86_400;
    const end = NOW / 1000 + 3_600;
    expect(urls(calls, '/api/mj/self/')).toEqual([
      `/api/mj/self/?p=1&page_size=10&start_timestamp=${start}&end_timestamp=${end}`,
    ]);
    expect(headers()).not.toContain('渠道');
    expect(headers()).not.toContain('操作');
    expect(screen.queryByText(/当前未开启 Midjourney 回调/)).toBeNull();
    expect(within(row).getByText('绘图')).toBeTruthy();
    expect(within(row).getByText('已提交')).toBeTruthy();
    expect(within(row).getByText('成功')).toBeTruthy();
    const image = within(row).getByRole('img', { name: '任务 mj-100 的结果图片' });
    expect(image.getAttribute('src')).toBe('https://cdn.example/cat.png');
    // 61 s is over the 60 s line: red.
    expect(within(row).getByText('61 秒').getAttribute('data-slow')).toBe('');
    const other = screen.getByRole('row', { name: 'task mj-101' });
    expect(within(other).getByText('放大')).toBeTruthy();
    expect(within(other).getByText('重复提交').getAttribute('title')).toBe('22');
    expect(within(other).getByText('失败')).toBeTruthy();
    expect(within(other).getByText('banned prompt')).toBeTruthy();
    expect(within(other).getByText('30 秒').getAttribute('data-slow')).toBeNull();
  });

  it('an admin sees the callback banner, the channel column and filters by id and channel', async () => {
    const calls = setUp(root, { mj_notify_enabled: false });
    renderApp('/midjourney');
    await screen.findByRole('row', { name: 'task mj-100' });
    expect(
      screen.getByText(
        '当前未开启 Midjourney 回调，部分项目可能无法获得绘图结果，可在运营设置中开启。',
      ),
    ).toBeTruthy();
    expect(headers()).toEqual(expect.arrayContaining(['渠道', '用户', '操作']));
    fireEvent.change(screen.getByLabelText('起始时间'), { target: { value: '2026-01-09T08:30' } });
    fireEvent.change(screen.getByLabelText('结束时间'), { target: { value: '2026-01-10T09:45' } });
    await userEvent.type(screen.getByLabelText('任务 ID'), 'mj-100');
    await userEvent.type(screen.getByLabelText('渠道 ID'), '4');
    await userEvent.click(screen.getByRole('button', { name: '查询' }));
    const start = new Date('2026-01-09T08:30').getTime() / 1000;
    const end = new Date('2026-01-10T09:45').getTime() / 1000;
    await waitFor(() =>
      expect(urls(calls, '/api/mj/')).toContain(
        `/api/mj/?p=1&page_size=10&channel_id=4&mj_id=mj-100&start_timestamp=${start}&end_timestamp=${end}`,
      ),
    );
  });

  it('no banner when the callback is on', async () => {
    setUp(root, { mj_notify_enabled: true });
    renderApp('/midjourney');
    await screen.findByRole('row', { name: 'task mj-100' });
    expect(screen.queryByText(/当前未开启 Midjourney 回调/)).toBeNull();
  });

  it('an admin refunds a task after confirming; a refunded one has no button', async () => {
    const calls = setUp(
      root,
      {},
      { 'POST /api/task/1/refund': ok({ id: 1, quota: 50_000, status: 'SUCCESS' }) },
    );
    renderApp('/midjourney');
    const row = await screen.findByRole('row', { name: 'task mj-100' });
    expect(
      within(screen.getByRole('row', { name: 'task mj-101' })).getByText('已退款'),
    ).toBeTruthy();
    await userEvent.click(within(row).getByRole('button', { name: '退款' }));
    const dialog = await screen.findByRole('dialog', { name: '退还这个任务的额度？' });
    await userEvent.click(within(dialog).getByRole('button', { name: '退款' }));
    expect(await screen.findByText('已退款 $0.10')).toBeTruthy();
    expect(calls.filter((c) => c.url === '/api/task/1/refund')).toHaveLength(1);
  });
});

describe('task log', () => {
  it('shows songs from midnight on, with every status label and the finished song', async () => {
    const calls = setUp(alice);
    renderApp('/task');
    expect(await screen.findByRole('heading', { name: '任务日志' })).toBeTruthy();
    const row = await screen.findByRole('row', { name: 'task suno-1' });
    const { start, end } = defaultTaskWindow(NOW);
    expect(urls(calls, '/api/task/self')).toEqual([
      `/api/task/self?p=1&page_size=10&start_timestamp=${start}&end_timestamp=${end}`,
    ]);
    expect(headers()).not.toContain('渠道');
    expect(within(row).getByText('Suno')).toBeTruthy();
    expect(within(row).getByText('生成音乐')).toBeTruthy();
    expect(within(row).getByText('成功')).toBeTruthy();
    const audio = within(row).getByLabelText('任务 suno-1 的音频');
    expect(audio.getAttribute('src')).toBe('https://cdn.example/song.mp3');
    expect(within(row).getByText('90 秒').getAttribute('data-slow')).toBeNull();
    expect(
      within(screen.getByRole('row', { name: 'task suno-2' })).getByText('提交中'),
    ).toBeTruthy();
    expect(
      within(screen.getByRole('row', { name: 'task suno-3' })).getByText('排队中'),
    ).toBeTruthy();
    expect(within(screen.getByRole('row', { name: 'task suno-4' })).getByText('未知')).toBeTruthy();
  });

  it('an admin filters by task id and channel', async () => {
    const calls = setUp(root);
    renderApp('/task');
    await screen.findByRole('row', { name: 'task suno-1' });
    expect(headers()).toEqual(expect.arrayContaining(['渠道', '平台', '操作']));
    await userEvent.type(screen.getByLabelText('任务 ID'), 'suno-1');
    await userEvent.type(screen.getByLabelText('渠道 ID'), '6');
    await userEvent.click(screen.getByRole('button', { name: '查询' }));
    await waitFor(() =>
      expect(urls(calls, '/api/task/').some((u) => u.includes('channel_id=6&task_id=suno-1'))).toBe(
        true,
      ),
    );
  });
});
