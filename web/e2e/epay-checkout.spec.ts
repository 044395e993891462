import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import { ROOT, setOptions, setUp } from './api';
import { expect, test } from './fixtures';

/** A local stand-in for an Epay gateway: records the checkout forms posted to submit.php. */
async function startGateway() {
  const forms: URLSearchParams[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method === 'POST' && request.url === '/submit.php') {
        forms.push(new URLSearchParams(Buffer.concat(chunks).toString()));
      }
      response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      response.end('<!doctype html><title>checkout</title><h1>checkout received</h1>');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}`,
    forms: () => forms,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

test('the Epay checkout form reaches the gateway PayAddress names, set without a restart', async ({
  page,
  context,
  server,
}) => {
  const gateway = await startGateway();
  try {
    await setUp(server);
    // Set while the server runs: the page's form-action follows it.
    await setOptions(server, {
      PayAddress: gateway.baseURL,
      EpayId: '1001',
      EpayKey: 'e2e-merchant-key',
      Price: '7.3',
      MinTopUp: '1',
    });
    const violations: string[] = [];
    page.on('console', (message) => {
      if (message.text().includes('Content Security Policy')) violations.push(message.text());
    });
    await page.goto('/login');
    await page.getByLabel('用户名或邮箱').fill(ROOT.username);
    await page.getByLabel('密码').fill(ROOT.password);
    await page.getByRole('button', { name: '登录' }).click();
    await expect(page).toHaveURL(/\/token$/);

    await page.goto('/topup');
    await page.getByLabel('充值数量').fill('2');
    await page.getByRole('button', { name: '支付宝' }).click();
    const confirm = page.getByRole('dialog', { name: '充值确认' });
    const checkout = context.waitForEvent('page');
    await confirm.getByRole('button', { name: '确认支付' }).click();

    await expect.poll(() => gateway.forms().length, { message: String(violations) }).toBe(1);
    const form = gateway.forms()[0];
    expect(form?.get('pid')).toBe('1001');
    expect(form?.get('type')).toBe('alipay');
    expect(form?.get('money')).toBe('14.60');
    const opened = await checkout;
    await expect(opened.getByRole('heading', { name: 'checkout received' })).toBeVisible();
    expect(violations).toEqual([]);
  } finally {
    await gateway.stop();
  }
});
