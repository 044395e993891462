import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';

import { ROLE_ROOT } from '@/api/user';
import { useSession } from '@/stores/session';
import type { MockAnswer } from '@/test/api-mock';
import { mockApi, statusData } from '@/test/api-mock';
import { stubClipboard } from '@/test/clipboard';
import { renderApp } from '@/test/render-app';
import { makeUser } from '@/test/users';

const root = makeUser({ id: 1, username: 'root', role: ROLE_ROOT });
const bob = makeUser({ id: 9, username: 'bob' });
const ok = (data: unknown): MockAnswer => ({ body: { success: true, message: '', data } });
const twoFactorOn = ok({ enabled: true, pending: false, backup_codes_remaining: 10 });

afterEach(() => {
  useSession.getState().clearUser();
});

describe('backup tokens card', () => {
  it('makes a token with a code, shows it once, lists it and revokes it', async () => {
    useSession.getState().setUser(root);
    let tokens: unknown[] = [];
    const calls = mockApi({
      'GET /api/status': { body: statusData() },
      'GET /api/user/self': ok(root),
      'GET /api/user/2fa/status': twoFactorOn,
      'GET /api/user/backup_tokens': () => ok(tokens),
      'POST /api/user/backup_tokens': ({ init }) => {
        const body = JSON.parse(String(init?.body)) as { name: string; code: string };
        if (body.code !== '135790') {
          return { status: 400, body: { success: false, message: 'wrong', code: 'code_invalid' } };
        }
        tokens = [{ id: 4, name: body.name, created_at: 1_700_000_000, last_used_at: 0 }];
        return ok({ ...(tokens[0] as object), token: 'tgb-secret-once' });
      },
      'DELETE /api/user/backup_tokens/4': () => {
        tokens = [];
        return ok(null);
      },
    });
    renderApp('/personal');
    const user = userEvent.setup();
    const writeText = stubClipboard();
    expect(await screen.findByText('还没有备份令牌', {}, { timeout: 10_000 })).toBeTruthy();
    await user.click(screen.getByRole('button', { name: '创建备份令牌' }));
    const dialog = await screen.findByRole('dialog', { name: '创建备份令牌' });
    await user.click(within(dialog).getByRole('button', { name: '创建' }));
    expect(await within(dialog).findByText('请输入验证码！')).toBeTruthy();
    await user.type(within(dialog).getByLabelText('名称'), 'nightly');
    await user.type(within(dialog).getByLabelText('验证码或恢复码'), '135790');
    await user.click(within(dialog).getByRole('button', { name: '创建' }));

    const shown = await screen.findByRole('dialog', { name: '备份令牌已创建' });
    expect(within(shown).getAllByText(/tgb-secret-once/).length).toBeGreaterThan(0);
    await user.click(within(shown).getByRole('button', { name: '复制' }));
    expect(writeText).toHaveBeenCalledWith('tgb-secret-once');
    await user.click(within(shown).getByRole('button', { name: '我已保存' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(screen.queryByText(/tgb-secret-once/)).toBeNull();
    const list = await screen.findByRole('list', { name: '备份令牌' });
    expect(within(list).getByText('nightly')).toBeTruthy();
    expect(within(list).getByText('从未使用')).toBeTruthy();
    expect(calls.find((c) => c.url === '/api/user/backup_tokens' && c.body)?.body).toEqual({
      name: 'nightly',
      code: '135790',
    });

    await user.click(within(list).getByRole('button', { name: '撤销备份令牌 nightly' }));
    expect(await screen.findByText('还没有备份令牌')).toBeTruthy();
  });

  it('is not shown to anyone but root', async () => {
    useSession.getState().setUser(bob);
    mockApi({
      'GET /api/status': { body: statusData() },
      'GET /api/user/self': ok(bob),
      'GET /api/user/2fa/status': twoFactorOn,
    });
    renderApp('/personal');
    expect(
      (await screen.findAllByText('两步验证', {}, { timeout: 10_000 })).length,
    ).toBeGreaterThan(0);
    expect(screen.queryByText('备份令牌')).toBeNull();
  });
});
