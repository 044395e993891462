import type { TollgateServer } from './tollgate-server';

/** The root account the tests' setup creates. */
export const ROOT = { username: 'root', password: 'root-pass-42' };

async function call(server: TollgateServer, path: string, init: RequestInit = {}) {
  const response = await fetch(`${server.baseURL}${path}`, {
    ...init,
    headers: { 'Content-Type': 'application/json', ...init.headers },
  });
  const body = (await response.json()) as { success: boolean; message: string };
  if (!response.ok || !body.success) {
    throw new Error(`${path} answered ${response.status}: ${body.message}`);
  }
  return body;
}

/** Test preparation over the API: setup with the root account, external usage mode. */
export async function setUp(server: TollgateServer): Promise<void> {
  await call(server, '/api/setup', {
    method: 'POST',
    body: JSON.stringify({
      username: ROOT.username,
      password: ROOT.password,
      confirmPassword: ROOT.password,
      SelfUseModeEnabled: false,
      DemoSiteEnabled: false,
    }),
  });
}

/** Registers an ordinary user over the public API. */
export async function registerUser(
  server: TollgateServer,
  username: string,
  password: string,
): Promise<void> {
  await call(server, '/api/user/register', {
    method: 'POST',
    body: JSON.stringify({ username, password, password2: password }),
  });
}
