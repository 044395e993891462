/**
 * Rate limits through the console (P15 item 5): a key's requests per minute set in the token
 * editor, a channel's per-key row set in the channel editor, both read back through the API;
 * the key's limit then refuses its second request, the channel's its next one from another key,
 * and the log shows that refusal's row marked. The editors and the rate-limit tab fit a 390 px
 * screen.
 */
import type { Page } from '@playwright/test';

import { ROOT, setUp, signIn } from './api';
import type { Caller } from './api';
import { expect, test } from './fixtures';
import { startMockUpstream } from './mock-upstream';

async function logIn(page: Page) {
  await page.goto('/login');
  await page.getByLabel('用户名或邮箱').fill(ROOT.username);
  await page.getByLabel('密码').fill(ROOT.password);
  await page.getByRole('button', { name: '登录' }).click();
  await expect(page).toHaveURL(/\/token$/);
}

/** A channel with two upstream keys and an unlimited key of root's, over the API. */
async function prepare(root: Caller, upstream: string) {
  await root.call('/api/channel/', {
    method: 'POST',
    body: JSON.stringify({
      mode: 'single',
      channel: {
        name: 'limited-channel',
        type: 1,
        key: 'sk-upstream-1\nsk-upstream-2',
        base_url: upstream,
        models: 'gpt-4o-mini',
        group: 'default',
      },
    }),
  });
  const channels = (await root.call('/api/channel/?p=1&page_size=10')).data as {
    items: { id: number; name: string }[];
  };
  const channel = channels.items.find((c) => c.name === 'limited-channel');
  const newKey = async (name: string) => {
    const token = (
      await root.call('/api/token/', {
        method: 'POST',
        body: JSON.stringify({ name, remain_quota: 0, unlimited_quota: true, expired_time: -1 }),
      })
    ).data as { id: number };
    const key = (
      (await root.call(`/api/token/${token.id}/key`, { method: 'POST' })).data as { key: string }
    ).key;
    return { id: token.id, key: key.startsWith('sk-') ? key : `sk-${key}` };
  };
  const limited = await newKey('limited-key');
  const other = await newKey('other-key');
  if (!channel) throw new Error('the channel was not created');
  return { channelId: channel.id, tokenId: limited.id, key: limited.key, otherKey: other.key };
}

async function chat(baseURL: string, key: string) {
  return fetch(`${baseURL}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${key}` },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
  });
}

test("a key's RPM from the token editor and a channel key's row from the channel editor are stored and enforced", async ({
  page,
  server,
}, testInfo) => {
  const upstream = await startMockUpstream();
  try {
    await setUp(server);
    const root = await signIn(server);
    const { channelId, tokenId, key, otherKey } = await prepare(root, upstream.baseURL);
    await logIn(page);

    await page
      .getByRole('row', { name: /limited-key/ })
      .getByRole('button', { name: '编辑' })
      .click();
    const drawer = page.getByRole('dialog', { name: '更新令牌信息' });
    const rate = drawer.getByRole('group', { name: '设置速率限制' });
    await rate.getByLabel('每分钟最多请求数（RPM）').fill('1');
    await rate.getByRole('button', { name: '保存速率限制' }).click();
    await expect(page.getByText('速率限制已保存！', { exact: true })).toBeVisible();
    await page.screenshot({ path: testInfo.outputPath('token-limits.png') });

    const tokenLimits = (await root.call(`/api/token/${tokenId}/limits`)).data;
    expect(tokenLimits).toMatchObject({ rpm_limit: 1, concurrency_limit: 0, key_limits: [] });

    await page.goto(`/channel/edit/${channelId}`);
    const editor = page.getByRole('dialog', { name: '编辑渠道' });
    const channelRate = editor.getByRole('group', { name: '设置速率限制' });
    await channelRate.getByLabel('每分钟最多请求数（RPM）').first().fill('1');
    await channelRate.getByRole('button', { name: '添加密钥限制' }).click();
    const row = channelRate.getByRole('row', { name: '第 1 条' });
    await row.getByLabel('密钥行').fill('3');
    await expect(channelRate.getByText('密钥行必须是 1 到 2 之间的整数')).toBeVisible();
    await row.getByLabel('密钥行').fill('2');
    await row.getByLabel('最大并发请求数').fill('2');
    await row.getByLabel('每分钟最多请求数（RPM）').fill('30');
    await channelRate.getByRole('button', { name: '保存速率限制' }).click();
    await expect(page.getByText('速率限制已保存！', { exact: true }).first()).toBeVisible();
    await page.screenshot({ path: testInfo.outputPath('channel-limits.png') });

    const channelLimits = (await root.call(`/api/channel/${channelId}/limits`)).data;
    expect(channelLimits).toMatchObject({
      rpm_limit: 1,
      key_limits: [{ index: 1, concurrency_limit: 2, rpm_limit: 30, tpm_limit: 0, rpd_limit: 0 }],
    });

    // Both edits are in the audit log with what they set.
    const audit = async (action: string) =>
      (
        (await root.call(`/api/audit?p=1&page_size=10&action=${action}`)).data as {
          items: { action: string; target: string; after: string }[];
        }
      ).items;
    const [tokenAudit] = await audit('token.limits');
    expect(JSON.parse(tokenAudit?.after ?? '{}')).toMatchObject({ rpm_limit: 1 });
    const [channelAudit] = await audit('channel.limits');
    expect(JSON.parse(channelAudit?.after ?? '{}')).toMatchObject({
      rpm_limit: 1,
      key_limits: [{ index: 1, rpm_limit: 30 }],
    });

    const first = await chat(server.baseURL, key);
    expect(first.status, 'the first request of the minute passes').toBe(200);
    const second = await chat(server.baseURL, key);
    expect(second.status, 'the second is over the key rpm limit').toBe(429);
    expect(second.headers.get('retry-after'), 'the refusal says when to retry').toBeTruthy();
    expect(upstream.calls(), 'the refused request never reached the upstream').toBe(1);

    const full = await chat(server.baseURL, otherKey);
    expect(full.status, 'another key finds the only channel at its RPM').toBe(429);
    expect(upstream.calls(), 'nor did the one the channel refused').toBe(1);
    // Both refusals have their error row, each naming its limit.
    await page.goto('/log');
    const refused = page.getByRole('row', { name: /^log / }).filter({ hasText: '限流 · RPM' });
    await expect(refused).toHaveCount(2);
    const refusedBy = async (tokenName: string) => {
      const row = refused.filter({ hasText: tokenName });
      await row.getByRole('button', { name: '展开详情' }).click();
      const details = page.getByRole('row', { name: '日志详情' });
      const fact = details
        .locator('dt', { hasText: '拒绝请求的限制' })
        .locator('xpath=following-sibling::dd');
      const text = await fact.textContent();
      await row.getByRole('button', { name: '收起详情' }).click();
      return text;
    };
    expect(await refusedBy('limited-key')).toBe(`令牌 #${tokenId}的每分钟请求数限制（1）`);
    expect(await refusedBy('other-key')).toBe(`渠道 #${channelId}的每分钟请求数限制（1）`);
    await page.screenshot({ path: testInfo.outputPath('log.png') });
  } finally {
    await upstream.stop();
  }
});

test('rules are edited as rows, and the rate-limit tab and the channel editor fit a 390 px screen', async ({
  page,
  server,
}, testInfo) => {
  const upstream = await startMockUpstream();
  try {
    await setUp(server);
    const root = await signIn(server);
    const { channelId } = await prepare(root, upstream.baseURL);
    await root.call(`/api/channel/${channelId}/limits`, {
      method: 'PUT',
      body: JSON.stringify({ key_limits: [{ index: 0, rpm_limit: 5 }] }),
    });
    await root.call('/api/option/', {
      method: 'PUT',
      body: JSON.stringify({
        key: 'RateLimitRules',
        value:
          '[{"group":"default","model":"gpt-4o-mini","concurrency_limit":2,"queue":5,"queue_timeout_ms":1000}]',
      }),
    });
    await page.setViewportSize({ width: 390, height: 800 });
    await logIn(page);
    const overflow = 'document.documentElement.scrollWidth - window.innerWidth';

    await page.goto('/setting?tab=ratelimit');
    const rule = page.getByRole('group', { name: '规则 1' });
    await expect(rule.getByLabel('分组')).toHaveValue('default');
    await expect(rule.getByLabel('最长排队时间（毫秒）')).toHaveValue('1000');
    await expect(page.getByRole('region', { name: '粘性路由（提示词缓存）' })).toBeVisible();
    expect(await page.evaluate(overflow), 'the rate-limit tab overflows').toBeLessThanOrEqual(0);

    // A second rule through the page: refused with its number until it names a target.
    await page.getByRole('button', { name: '添加规则' }).click();
    const added = page.getByRole('group', { name: '规则 2' });
    await added.getByLabel('每分钟最多请求数（RPM）').fill('60');
    await page.getByRole('button', { name: '保存限流规则' }).click();
    await expect(page.getByText('第 2 条规则既没有指定分组也没有指定模型')).toBeVisible();
    await added.getByLabel('分组').fill('vip');
    await page.getByRole('button', { name: '保存限流规则' }).click();
    await expect(page.getByText('限流规则已保存！', { exact: true })).toBeVisible();
    await page.screenshot({ path: testInfo.outputPath('rules-390.png'), fullPage: true });
    const stored = (
      (await root.call('/api/option/')).data as { key: string; value: string }[]
    ).find((o) => o.key === 'RateLimitRules')?.value;
    expect(JSON.parse(stored ?? '[]')).toEqual([
      {
        group: 'default',
        model: 'gpt-4o-mini',
        concurrency_limit: 2,
        queue: 5,
        queue_timeout_ms: 1000,
      },
      { group: 'vip', rpm_limit: 60 },
    ]);
    const rulesAudit = (
      (await root.call('/api/audit?p=1&page_size=10&action=option.update')).data as {
        items: { target: string }[];
      }
    ).items;
    expect(
      rulesAudit.filter((r) => r.target === 'option:RateLimitRules'),
      'the API save and the page save are both audited',
    ).toHaveLength(2);

    await page.goto(`/channel/edit/${channelId}`);
    const keyRow = page.getByRole('row', { name: '第 1 条' });
    await expect(keyRow.getByLabel('每分钟最多请求数（RPM）')).toHaveValue('5');
    await keyRow.scrollIntoViewIfNeeded();
    expect(await page.evaluate(overflow), 'the channel editor overflows').toBeLessThanOrEqual(0);
    const drawerOverflow = await page.evaluate<number>(
      "(() => { const d = document.querySelector('[role=dialog]'); return d.scrollWidth - d.clientWidth; })()",
    );
    expect(drawerOverflow, 'the drawer scrolls sideways').toBeLessThanOrEqual(0);
    await page.screenshot({ path: testInfo.outputPath('channel-390.png') });
  } finally {
    await upstream.stop();
  }
});
