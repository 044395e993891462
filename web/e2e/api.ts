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

/** Saves options as root over the API (sign-in cookie plus New-Api-User). */
export async function setOptions(
  server: TollgateServer,
  options: Record<string, string>,
): Promise<void> {
  const login = await fetch(`${server.baseURL}/api/user/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(ROOT),
  });
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const { data } = (await login.json()) as { data: { id: number } };
  for (const [key, value] of Object.entries(options)) {
    await call(server, '/api/option/', {
      method: 'PUT',
      headers: { Cookie: cookie, 'New-Api-User': String(data.id) },
      body: JSON.stringify({ key, value }),
    });
  }
}
