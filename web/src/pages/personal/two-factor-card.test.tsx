import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';

import { useSession } from '@/stores/session';
import type { MockAnswer } from '@/test/api-mock';
import { mockApi, statusData } from '@/test/api-mock';
import { stubClipboard } from '@/test/clipboard';
import { renderApp } from '@/test/render-app';
import { makeUser } from '@/test/users';

const bob = makeUser({ id: 9, username: 'bob' });
const ok = (data: unknown): MockAnswer => ({ body: { success: true, message: '', data } });
const codes = Array.from({ length: 10 }, (_, i) => `abcde-fgh${String(i).padStart(2, '0')}`);
const uri = 'otpauth://totp/Tollgate:bob?secret=JBSWY3DPEHPK3PXP&issuer=Tollgate';

afterEach(() => {
  useSession.getState().clearUser();
});

function setUp(enabled: { value: boolean }, extra: Record<string, MockAnswer> = {}) {
  useSession.getState().setUser(bob);
  return mockApi({
    'GET /api/status': { body: statusData() },
    'GET /api/user/self': ok(bob),
    'GET /api/user/2fa/status': () =>
      ok({
        enabled: enabled.value,
        pending: false,
        backup_codes_remaining: enabled.value ? 10 : 0,
      }),
    ...extra,
  });
}

describe('two-factor card', () => {
  it('turns two-factor on with a QR code and the key as text, then shows the recovery codes once', async () => {
    const enabled = { value: false };
    const calls = setUp(enabled, {
      'POST /api/user/2fa/setup': ok({ secret: 'JBSWY3DPEHPK3PXP', qr_code_data: uri }),
      'POST /api/user/2fa/enable': ({ init }) => {
        if (JSON.parse(String(init?.body)).code !== '135790') {
          return {
            status: 400,
            body: { success: false, message: 'wrong', code: 'code_invalid' },
          };
        }
        enabled.value = true;
        return ok({ backup_codes: codes });
      },
    });
    const createObjectURL = vi.fn(() => 'blob:codes');
    const revokeObjectURL = vi.fn();
    Object.assign(URL, { createObjectURL, revokeObjectURL });
    renderApp('/personal');
    const user = userEvent.setup();
    const writeText = stubClipboard();
    await user.click(
      await screen.findByRole('button', { name: '开启两步验证' }, { timeout: 10_000 }),
    );
    const confirm = await screen.findByRole('dialog', { name: '确认身份' });
    await user.type(within(confirm).getByLabelText('当前密码'), 'bobpass99');
    await user.click(within(confirm).getByRole('button', { name: '继续' }));
    const form = await screen.findByRole('form', { name: '设置两步验证' });
    expect(calls.find((c) => c.url === '/api/user/2fa/setup')?.body).toEqual({
      password: 'bobpass99',
    });
    expect(within(form).getByTitle('两步验证二维码')).toBeTruthy();
    expect(within(form).getByText('JBSWY3DPEHPK3PXP')).toBeTruthy();
    await user.click(within(form).getByRole('button', { name: '验证并开启' }));
    expect(await within(form).findByText('请输入验证码！')).toBeTruthy();
    await user.type(within(form).getByLabelText('验证码'), '135790');
    await user.click(within(form).getByRole('button', { name: '验证并开启' }));

    const dialog = await screen.findByRole('dialog', { name: '恢复码' });
    for (const code of codes) expect(within(dialog).getByText(code)).toBeTruthy();
    await user.click(within(dialog).getByRole('button', { name: '复制' }));
    expect(writeText).toHaveBeenCalledWith(`${codes.join('\n')}\n`);
    await user.click(within(dialog).getByRole('button', { name: '下载' }));
    expect(createObjectURL).toHaveBeenCalledOnce();
    await user.click(within(dialog).getByRole('button', { name: '我已保存' }));
    await waitFor(() => expect(screen.queryByRole('dialog', { name: '恢复码' })).toBeNull());
    expect(await screen.findByText('剩余恢复码：10 个')).toBeTruthy();
    expect(calls.find((c) => c.url === '/api/user/2fa/enable')?.body).toEqual({ code: '135790' });
  });

  it('turns it off and makes new recovery codes, each with a code', async () => {
    const enabled = { value: true };
    const calls = setUp(enabled, {
      'POST /api/user/2fa/backup_codes': ok({ backup_codes: codes }),
      'POST /api/user/2fa/disable': () => {
        enabled.value = false;
        return { body: { success: true, message: 'off' } };
      },
    });
    renderApp('/personal');
    const user = userEvent.setup();
    await user.click(
      await screen.findByRole('button', { name: '重新生成恢复码' }, { timeout: 10_000 }),
    );
    let dialog = await screen.findByRole('dialog', { name: '重新生成恢复码' });
    await user.type(within(dialog).getByLabelText('验证码或恢复码'), '222222');
    await user.click(within(dialog).getByRole('button', { name: '生成' }));
    const shown = await screen.findByRole('dialog', { name: '恢复码' });
    expect(within(shown).getByText(codes[0] ?? '')).toBeTruthy();
    await user.click(within(shown).getByRole('button', { name: '我已保存' }));

    await user.click(await screen.findByRole('button', { name: '关闭两步验证' }));
    dialog = await screen.findByRole('dialog', { name: '关闭两步验证' });
    await user.click(within(dialog).getByRole('button', { name: '确认关闭' }));
    expect(await within(dialog).findByText('请输入验证码！')).toBeTruthy();
    await user.type(within(dialog).getByLabelText('验证码或恢复码'), 'abcde-fgh01');
    await user.click(within(dialog).getByRole('button', { name: '确认关闭' }));
    expect(await screen.findByRole('button', { name: '开启两步验证' })).toBeTruthy();
    expect(calls.find((c) => c.url === '/api/user/2fa/backup_codes')?.body).toEqual({
      code: '222222',
    });
    expect(calls.find((c) => c.url === '/api/user/2fa/disable')?.body).toEqual({
      code: 'abcde-fgh01',
    });
  });
});
