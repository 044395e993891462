import { setOptions, setUp } from './api';
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
