import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';

import { logSchema } from '@/api/logs';
import { useSession } from '@/stores/session';
import { mockApi, statusData } from '@/test/api-mock';
import { renderApp } from '@/test/render-app';
import { makeUser } from '@/test/users';

const root = makeUser({ id: 1, username: 'root', role: 100 });
const ok = (data: unknown) => ({ body: { success: true, message: '', data } });
const errorRow = (id: number, content: string, other: Record<string, unknown>) =>
  logSchema.parse({
    id,
    created_at: 1_768_040_000 + id,
    type: 5,
    username: 'alice',
    user_id: 2,
    token_name: 'laptop',
    model_name: 'gpt-4o',
    content,
    other: JSON.stringify(other),
  });

const byKey = errorRow(21, 'API key 12 allows 60 requests per minute (rpm limit)', {
  status_code: 429,
  error_code: 'rate_limit_exceeded',
  limit: { scope: 'token', kind: 'rpm', limit: 60, token_id: 12 },
});
const byRule = errorRow(22, 'rule free/gpt-4o allows 2 concurrent requests', {
  status_code: 429,
  error_code: 'rate_limit_exceeded',
  limit: { scope: 'rule', kind: 'concurrency', limit: 2, group: 'free' },
});
const byKeyLine = errorRow(23, 'channel 3 key 2 allows 5 requests per minute', {
  error_code: 'rate_limit_exceeded',
  limit: { scope: 'channel_key', kind: 'tpm', limit: 1000, channel_id: 3, key_index: 1 },
});
const codeOnly = errorRow(24, 'channel 3 allows 1 concurrent requests', {
  status_code: 429,
  error_code: 'rate_limit_exceeded',
});
const byModelLimit = errorRow(26, 'at most 2 requests per 1 minute(s)', {
  status_code: 429,
  error_code: 'rate_limit_exceeded',
  limit: { scope: 'user', kind: 'model_requests', limit: 2, user_id: 2, window_minutes: 1 },
});
const upstream = errorRow(25, 'upstream answered 502', {
  status_code: 502,
  error_code: 'upstream_error',
});

afterEach(() => useSession.getState().clearUser());

describe('a refused request in the log', () => {
  it('marks the row and names the limit that refused it in the details', async () => {
    vi.spyOn(Date, 'now').mockReturnValue(1_768_046_400_000);
    useSession.getState().setUser(root);
    mockApi({
      'GET /api/status': { body: statusData() },
      'GET /api/log/': ok({
        items: [byKey, byRule, byKeyLine, codeOnly, upstream, byModelLimit],
        page: 1,
        page_size: 10,
        total: 6,
      }),
      'GET /api/log/stat': ok({ quota: 0, rpm: 0, tpm: 0 }),
      'GET /api/group/': ok(['default']),
    });
    renderApp('/log');
    const row = await screen.findByRole('row', { name: 'log 21' });
    const badge = within(row).getByText('限流 · RPM');
    expect(badge.getAttribute('title')).toBe('令牌 #12的每分钟请求数限制（60）');
    expect(within(screen.getByRole('row', { name: 'log 24' })).getByText('限流')).toBeTruthy();
    expect(within(screen.getByRole('row', { name: 'log 25' })).queryByText(/限流/)).toBeNull();

    const fact = async (id: number) => {
      const r = screen.getByRole('row', { name: `log ${id}` });
      await userEvent.click(within(r).getByRole('button', { name: '展开详情' }));
      const details = screen.getByRole('row', { name: '日志详情' });
      const text = within(details).getByText('拒绝请求的限制').closest('div')?.querySelector('dd');
      const found = text?.textContent;
      await userEvent.click(within(r).getByRole('button', { name: '收起详情' }));
      return found;
    };
    expect(await fact(21)).toBe('令牌 #12的每分钟请求数限制（60）');
    expect(await fact(22)).toBe('限流规则（分组：free，模型：全部模型）的并发请求数限制（2）');
    expect(await fact(23)).toBe('渠道 #3 第 2 行密钥的每分钟 Token 数限制（1000）');
    const model = within(screen.getByRole('row', { name: 'log 26' })).getByText('限流 · 模型请求');
    expect(model.getAttribute('title')).toBe('用户 #2的每 1 分钟模型请求数限制（2）');
    expect(await fact(26)).toBe('用户 #2的每 1 分钟模型请求数限制（2）');
  });
});
