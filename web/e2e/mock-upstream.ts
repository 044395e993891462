import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A local OpenAI-style upstream for channel tests: answers chat completions with usage. */
export interface MockUpstream {
  baseURL: string;
  /** How many chat completions it answered. */
  calls: () => number;
  stop: () => Promise<void>;
}

/** The reply every completion carries. */
export const MOCK_REPLY = 'hi';

export async function startMockUpstream(): Promise<MockUpstream> {
  let calls = 0;
  const server = createServer((request, response) => {
    request.resume();
    if (request.method !== 'POST' || !request.url?.endsWith('/chat/completions')) {
      response.writeHead(404, { 'Content-Type': 'application/json' });
      response.end(JSON.stringify({ error: { message: 'not found' } }));
      return;
    }
    calls += 1;
    response.writeHead(200, { 'Content-Type': 'application/json' });
    response.end(
      JSON.stringify({
        id: 'chatcmpl-e2e',
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: 'gpt-4o',
        choices: [
          { index: 0, message: { role: 'assistant', content: MOCK_REPLY }, finish_reason: 'stop' },
        ],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      }),
    );
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}`,
    calls: () => calls,
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
