import { vi } from 'vitest';

/** A canned answer: an envelope body, or a bare HTTP status, or a thrown network error. */
export type MockAnswer =
  | { status?: number; body: unknown }
  | { networkError: true }
  | ((request: { url: string; init: RequestInit | undefined }) => MockAnswer);

export interface RecordedCall {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: unknown;
}

/**
 * Replaces `fetch` with a table of `'METHOD /path'` → answer. Unknown routes answer a JSON 404
 * like the server does. Returns the calls made, in order.
 */
export function mockApi(routes: Record<string, MockAnswer>): RecordedCall[] {
  const calls: RecordedCall[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (input: string, init?: RequestInit) => {
      const method = init?.method ?? 'GET';
      const path = input.split('?')[0] ?? input;
      calls.push({
        method,
        url: input,
        headers: Object.fromEntries(new Headers(init?.headers).entries()),
        body: typeof init?.body === 'string' ? JSON.parse(init.body) : undefined,
      });
      let answer: MockAnswer = routes[`${method} ${path}`] ?? {
        status: 404,
        body: { success: false, message: 'not found' },
      };
      while (typeof answer === 'function') answer = answer({ url: input, init });
      if ('networkError' in answer) throw new TypeError('Failed to fetch');
      return new Response(JSON.stringify(answer.body), {
        status: answer.status ?? 200,
        headers: { 'Content-Type': 'application/json' },
      });
    }),
  );
  return calls;
}

/** GET /api/status data for tests: a set-up, external-mode server unless overridden. */
export function statusData(overrides: Record<string, unknown> = {}) {
  return {
    success: true,
    message: '',
    data: {
      system_name: 'Tollgate',
      logo: '',
      setup: true,
      root_init: true,
      database_type: 'redb',
      docs_link: '',
      self_use_mode_enabled: false,
      demo_site_enabled: false,
      enable_data_export: true,
      chats: [],
      ...overrides,
    },
  };
}
