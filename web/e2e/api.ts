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
      // What the setup page sends: the address the browser uses.
      ServerAddress: server.baseURL,
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

/** A signed-in API caller: the session cookie and `New-Api-User` of the user. */
export interface Caller {
  call: (path: string, init?: RequestInit) => Promise<{ data: unknown }>;
}

/** Signs in over the API and returns a caller that carries the session. */
export async function signIn(
  server: TollgateServer,
  username = ROOT.username,
  password = ROOT.password,
): Promise<Caller> {
  const response = await fetch(`${server.baseURL}/api/user/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
  const body = (await response.json()) as { success: boolean; data: { id: number } };
  if (!body.success) throw new Error(`login of ${username} failed`);
  const cookie = (response.headers.getSetCookie?.() ?? []).map((c) => c.split(';')[0]).join('; ');
  const userId = String(body.data.id);
  return {
    call: async (path, init = {}) => {
      const answer = await fetch(`${server.baseURL}${path}`, {
        ...init,
        headers: {
          'Content-Type': 'application/json',
          Cookie: cookie,
          'New-Api-User': userId,
          ...init.headers,
        },
      });
      const parsed = (await answer.json()) as { success: boolean; message: string; data: unknown };
      if (!answer.ok || !parsed.success) {
        throw new Error(`${path} answered ${answer.status}: ${parsed.message}`);
      }
      return parsed;
    },
  };
}

/** Saves an option as an admin. */
export async function setOption(admin: Caller, key: string, value: string): Promise<void> {
  await admin.call('/api/option/', { method: 'PUT', body: JSON.stringify({ key, value }) });
}

/** Adds an OpenAI-type channel for `models` at `baseUrl`. */
export async function addChannel(admin: Caller, baseUrl: string, models: string): Promise<void> {
  await admin.call('/api/channel/', {
    method: 'POST',
    body: JSON.stringify({
      name: 'e2e-mock',
      type: 1,
      key: 'sk-upstream',
      base_url: baseUrl,
      models,
      group: 'default',
    }),
  });
}
