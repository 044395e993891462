import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An OpenAI-style upstream that streams `pieces` as chat chunks, `delayMs` apart. */
export interface MockStream {
  baseURL: string;
  /** Requests whose client went away before the stream ended. */
  abandoned: () => number;
  stop: () => Promise<void>;
}

export async function startMockStream(pieces: string[], delayMs: number): Promise<MockStream> {
  let abandoned = 0;
  const server = createServer((request, response) => {
    request.resume();
    if (request.method !== 'POST' || !request.url?.endsWith('/chat/completions')) {
      response.writeHead(404, { 'Content-Type': 'application/json' });
      response.end(JSON.stringify({ error: { message: 'not found' } }));
      return;
    }
    response.writeHead(200, { 'Content-Type': 'text/event-stream' });
    const chunk = (delta: object, finish: string | null = null, usage?: object) =>
      `data: ${JSON.stringify({
        id: 'chatcmpl-e2e',
        object: 'chat.completion.chunk',
        created: Math.floor(Date.now() / 1000),
        model: 'gpt-4o-mini',
        choices: [{ index: 0, delta, finish_reason: finish }],
        ...(usage ? { usage } : {}),
      })}\n\n`;
    let i = 0;
    let closed = false;
    response.on('close', () => {
      if (i < pieces.length) abandoned += 1;
      closed = true;
    });
    const next = () => {
      if (closed) return;
      if (i < pieces.length) {
        response.write(chunk({ content: pieces[i] }));
        i += 1;
        setTimeout(next, delayMs);
        return;
      }
      response.write(
        chunk({}, 'stop', { prompt_tokens: 5, completion_tokens: pieces.length, total_tokens: 9 }),
      );
      response.end('data: [DONE]\n\n');
    };
    next();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}`,
    abandoned: () => abandoned,
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
