import { ROOT, setOptions, setUp } from './api';
import { expect, test } from './fixtures';
import { OIDC_CLIENT, startOidcProvider } from './oidc-provider';

test('a visitor signs in with OIDC from the login button to the landing page', async ({
  page,
  server,
}) => {
  const idp = await startOidcProvider({
    sub: 'e2e-sub-1',
    preferred_username: 'oidcuser',
    name: 'OIDC User',
    email: 'oidcuser@example.com',
  });
  try {
    await setUp(server);
    await setOptions(server, {
      ServerAddress: server.baseURL,
      'oidc.enabled': 'true',
      'oidc.client_id': OIDC_CLIENT.id,
      'oidc.client_secret': OIDC_CLIENT.secret,
      'oidc.well_known': idp.wellKnown,
    });

    await page.goto('/login');
    await page.getByRole('button', { name: 'OIDC' }).click();
    // The provider approves at once and sends the browser back to /oauth/oidc, which lands on /.
    await expect(page, 'an OAuth sign-in lands on /').toHaveURL(`${server.baseURL}/`);
    await expect(page.getByText('登录成功！', { exact: true })).toBeVisible();
    // The e2e project has no DOM types: the page evaluates a string.
    const stored = await page.evaluate<string | null>("localStorage.getItem('user')");
    expect(JSON.parse(stored ?? 'null')).toMatchObject({
      username: 'oidcuser',
      email: 'oidcuser@example.com',
    });

    await page.goto('/personal');
    await expect(page.getByText('@oidcuser')).toBeVisible();
    await expect(page.getByText(`${idp.issuer} e2e-sub-1`)).toBeVisible();
  } finally {
    await idp.stop();
  }
});

test('root fills the OIDC endpoints from the well-known document through the server', async ({
  page,
  server,
}) => {
  const idp = await startOidcProvider({
    sub: 'e2e-sub-2',
    preferred_username: 'unused',
    name: 'Unused',
    email: 'unused@example.com',
  });
  try {
    await setUp(server);
    await page.goto('/login');
    await page.getByLabel('用户名或邮箱').fill(ROOT.username);
    await page.getByLabel('密码').fill(ROOT.password);
    await page.getByRole('button', { name: '登录' }).click();
    await expect(page).toHaveURL(/\/token$/);

    await page.goto('/setting?tab=system');
    const oidc = page.getByRole('region', { name: '配置 OIDC' });
    await oidc.getByLabel('Well-Known URL').fill(idp.wellKnown);
    await oidc.getByRole('button', { name: '获取 OIDC 配置' }).click();
    await expect(page.getByText('获取 OIDC 配置成功！', { exact: true })).toBeVisible();
    await expect(oidc.getByLabel('Authorization Endpoint')).toHaveValue(`${idp.issuer}/authorize`);
    await expect(oidc.getByLabel('Token Endpoint')).toHaveValue(`${idp.issuer}/token`);
    await expect(oidc.getByLabel('User Info Endpoint')).toHaveValue(`${idp.issuer}/userinfo`);
    await oidc.getByRole('button', { name: '保存配置 OIDC' }).click();
    await expect(page.getByText('保存成功', { exact: true })).toBeVisible();
    await page.reload();
    await expect(
      page.getByRole('region', { name: '配置 OIDC' }).getByLabel('Token Endpoint'),
    ).toHaveValue(`${idp.issuer}/token`);

    await oidc
      .getByLabel('Well-Known URL')
      .fill('http://127.0.0.1:1/.well-known/openid-configuration');
    await oidc.getByRole('button', { name: '获取 OIDC 配置' }).click();
    await expect(
      page.getByText('获取 OIDC 配置失败，请检查网络状况和 Well-Known URL 是否正确').first(),
    ).toBeVisible();
  } finally {
    await idp.stop();
  }
});
