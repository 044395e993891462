import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';

import { useSession } from '@/stores/session';
import { mockApi, statusData } from '@/test/api-mock';
import type { MockAnswer } from '@/test/api-mock';
import { renderApp } from '@/test/render-app';
import { makeUser } from '@/test/users';

import { amountProblem } from './schema';

const alice = makeUser({ id: 5, username: 'alice', quota: 1_500_000, used_quota: 250_000 });

const ok = (data: unknown) => ({ body: { success: true, message: '', data } });

function setUp(extra: Record<string, MockAnswer> = {}, status: Record<string, unknown> = {}) {
  useSession.getState().setUser(alice);
  let quota = alice.quota;
  return mockApi({
    'GET /api/status': {
      body: statusData({ display_in_currency: true, quota_per_unit: 500_000, ...status }),
    },
    'GET /api/user/self': () => ok({ ...alice, quota }),
    'GET /api/user/topup/self': ok({
      items: [
        {
          id: 1,
          amount: 10,
          money: 73,
          quota: 5_000_000,
          trade_no: 'USR5NOabc',
          payment_method: 'zfb',
          status: 'success',
          create_time: 1_700_000_000,
          complete_time: 1_700_000_100,
        },
      ],
      page: 1,
      page_size: 10,
      total: 1,
    }),
    'POST /api/user/topup': ({ init }) => {
      const { key } = JSON.parse(String(init?.body)) as { key: string };
      if (key !== 'good-code') {
        return {
          status: 400,
          body: { success: false, message: 'invalid redemption code', code: 'redemption_invalid' },
        };
      }
      quota += 500_000;
      return ok(500_000);
    },
    ...extra,
  });
}

/** Every later call fails on the way (no answer at all). */
function mockNetworkFailure() {
  vi.stubGlobal(
    'fetch',
    vi.fn(async () => {
      throw new TypeError('Failed to fetch');
    }),
  );
}

afterEach(() => {
  useSession.getState().clearUser();
  vi.restoreAllMocks();
  vi.unstubAllGlobals();
});

describe('top-up amount rule (spec 02 §5)', () => {
  it('wants an integer of at least 1 and at least the minimum', () => {
    expect(amountProblem(5, 5)).toBeNull();
    expect(amountProblem(4, 5)).toBe('min');
    expect(amountProblem(0, 0)).toBe('min');
    expect(amountProblem(2.5, 1)).toBe('integer');
    expect(amountProblem(Number.NaN, 1)).toBe('integer');
  });
});

describe('/topup', () => {
  it('shows the balance in currency and the top-up history', async () => {
    setUp();
    renderApp('/topup');
    expect(await screen.findByRole('heading', { name: '钱包' })).toBeTruthy();
    expect(await screen.findByText('$3.00')).toBeTruthy();
    const row = await screen.findByRole('row', { name: 'USR5NOabc' });
    expect(within(row).getByText('已完成')).toBeTruthy();
    expect(within(row).getByText('支付宝')).toBeTruthy();
    expect(within(row).getByText('73.00 元')).toBeTruthy();
  });

  it('shows a debt with its minus sign in the error colour, and a sub-cent cost as non-zero', async () => {
    setUp({
      'GET /api/user/self': ok({ ...alice, quota: -2_100, used_quota: 1 }),
    });
    renderApp('/topup');
    const balance = await screen.findByTestId('balance');
    await waitFor(() => expect(balance.textContent).toBe('-$0.0042'));
    expect(balance.querySelector('[data-negative]')).not.toBeNull();
    expect(screen.getByText('$0.0000020').hasAttribute('data-negative')).toBe(false);
  });

  it('shows the balance in compact units when not in currency', async () => {
    setUp({}, { display_in_currency: false });
    renderApp('/topup');
    expect(await screen.findByText('1.5M')).toBeTruthy();
  });

  it('redeems a code, reports the quota and refreshes the balance', async () => {
    const calls = setUp();
    renderApp('/topup');
    await screen.findByText('$3.00');
    await userEvent.click(screen.getByRole('button', { name: '兑换' }));
    expect(await screen.findByText('请输入兑换码！')).toBeTruthy();
    expect(calls.some((c) => c.url === '/api/user/topup')).toBe(false);

    await userEvent.type(screen.getByLabelText('兑换码'), 'bad-code');
    await userEvent.click(screen.getByRole('button', { name: '兑换' }));
    expect(await screen.findByText('无效的兑换码')).toBeTruthy();

    await userEvent.clear(screen.getByLabelText('兑换码'));
    await userEvent.type(screen.getByLabelText('兑换码'), ' good-code ');
    await userEvent.click(screen.getByRole('button', { name: '兑换' }));
    expect(await screen.findByText('兑换成功！成功兑换额度：$1.00')).toBeTruthy();
    expect(await screen.findByText('$4.00')).toBeTruthy();

    await userEvent.click(screen.getByRole('button', { name: '兑换' }));
    expect(await screen.findByText('请输入兑换码！')).toBeTruthy();
    mockNetworkFailure();
    await userEvent.type(screen.getByLabelText('兑换码'), 'good-code');
    await userEvent.click(screen.getByRole('button', { name: '兑换' }));
    expect(await screen.findByText('请求失败')).toBeTruthy();
    expect(calls.filter((c) => c.url === '/api/user/topup').at(-1)?.body).toEqual({
      key: 'good-code',
    });
  });

  it('needs the top-up link to buy codes', async () => {
    setUp();
    renderApp('/topup');
    await userEvent.click(await screen.findByRole('button', { name: '获取兑换码' }));
    expect(await screen.findByText('超级管理员未设置充值链接！')).toBeTruthy();
  });

  it('opens the top-up link when set', async () => {
    const open = vi.fn();
    vi.stubGlobal('open', open);
    setUp({}, { top_up_link: 'https://shop.example/codes' });
    renderApp('/topup');
    await userEvent.click(await screen.findByRole('button', { name: '获取兑换码' }));
    expect(open).toHaveBeenCalledWith('https://shop.example/codes', '_blank', 'noopener');
  });

  it('refuses online top-up when it is not enabled', async () => {
    const calls = setUp();
    renderApp('/topup');
    await userEvent.click(await screen.findByRole('button', { name: '支付宝' }));
    expect((await screen.findAllByText('管理员未开启在线充值！')).length).toBeGreaterThan(1);
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(calls.some((c) => c.url === '/api/user/amount')).toBe(false);
  });

  it('quotes the amount, enforces the minimum, confirms and posts the gateway form', async () => {
    const submit = vi.spyOn(HTMLFormElement.prototype, 'submit').mockImplementation(() => {});
    const calls = setUp(
      {
        'POST /api/user/amount': ({ init }) => {
          const { amount } = JSON.parse(String(init?.body)) as { amount: number };
          return { body: { success: true, message: 'success', data: (amount * 7.3).toFixed(2) } };
        },
        'POST /api/user/pay': {
          body: {
            success: true,
            message: 'success',
            data: { pid: '1001', type: 'wx', money: '73.00', sign: 'abc', sign_type: 'MD5' },
            url: 'https://pay.example/submit.php',
          },
        },
      },
      { enable_online_topup: true, min_topup: 5 },
    );
    renderApp('/topup');
    const amount = await screen.findByLabelText('充值数量');
    expect(amount).toHaveProperty('value', '5');
    expect(await screen.findByText('实付金额：36.50 元')).toBeTruthy();

    await userEvent.clear(amount);
    await userEvent.type(amount, '3');
    expect((await screen.findAllByText('充值数量不能小于 5')).length).toBeGreaterThan(0);
    await userEvent.click(screen.getByRole('button', { name: '微信' }));
    expect(screen.queryByRole('dialog')).toBeNull();

    await userEvent.clear(amount);
    await userEvent.type(amount, '10');
    expect(await screen.findByText('实付金额：73.00 元')).toBeTruthy();
    await userEvent.click(screen.getByRole('button', { name: '微信' }));
    const dialog = await screen.findByRole('dialog', { name: '充值确认' });
    expect(within(dialog).getByText('73.00 元')).toBeTruthy();
    await userEvent.click(within(dialog).getByRole('button', { name: '确认支付' }));

    await waitFor(() => expect(submit).toHaveBeenCalledOnce());
    expect(calls.find((c) => c.url === '/api/user/pay')?.body).toEqual({
      amount: 10,
      top_up_code: '',
      payment_method: 'wx',
    });
    const posted = submit.mock.contexts[0] as HTMLFormElement;
    expect(posted.action).toBe('https://pay.example/submit.php');
    expect(posted.method).toBe('post');
    expect(posted.target).toBe('_blank');
    const fields = Object.fromEntries(new FormData(posted).entries());
    expect(fields).toMatchObject({ pid: '1001', money: '73.00', sign: 'abc' });
  });

  it('shows a refused quote as 错误： and the reason', async () => {
    setUp(
      {
        'POST /api/user/amount': {
          body: { success: false, message: 'error', data: '充值金额过低' },
        },
      },
      { enable_online_topup: true },
    );
    renderApp('/topup');
    expect(await screen.findByText('错误：充值金额过低')).toBeTruthy();
  });
});
