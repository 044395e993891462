import { once } from 'node:events';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local task upstream for the task relays, in the wire formats `src/task_relay/` submits with
 * and `src/task_poll/` polls with (the Node twin of `tests/common/mock_tasks.rs`'s answers):
 *
 * - Midjourney-proxy: `POST /mj/submit/imagine` (key in `mj-api-secret`) accepts with
 *   `{code: 1, result: <task id>}`; `POST /mj/task/list-by-condition` with `{ids}` answers each
 *   task SUCCESS at 100 % with an image this mock serves, finished 45 s after its submit.
 * - Suno: `POST /suno/submit/music` (Bearer key) accepts with `{code: "success", data: <task id>}`;
 *   `POST /suno/fetch` with `{ids}` answers each task SUCCESS with one song (audio and cover URLs
 *   on this mock).
 * - `GET /files/<name>.png`: a 1×1 PNG; `GET /files/<name>.mp3`: an empty audio file.
 */
export interface MockTasks {
  baseURL: string;
  /** The channel key the mock expects. */
  key: string;
  /** `METHOD path` of every call, in order. */
  calls: () => string[];
  stop: () => Promise<void>;
}

/** A 1×1 PNG, served as the drawing and the song cover. */
export const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

/** What the upstream says a drawing took, in seconds. */
export const DRAWING_SECONDS = 45;

async function readJson(request: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  try {
    const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function send(response: ServerResponse, status: number, body: unknown) {
  response.writeHead(status, { 'Content-Type': 'application/json' });
  response.end(JSON.stringify(body));
}

export async function startMockTasks(key = 'task-secret'): Promise<MockTasks> {
  const calls: string[] = [];
  /** Submit times (milliseconds) by task id. */
  const drawings = new Map<string, number>();
  const songs = new Map<string, number>();
  let base = '';

  const server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0] ?? '';
    calls.push(`${request.method} ${path}`);
    if (request.method === 'GET' && path.startsWith('/files/')) {
      const png = path.endsWith('.png');
      response.writeHead(200, { 'Content-Type': png ? 'image/png' : 'audio/mpeg' });
      response.end(png ? PNG : Buffer.alloc(0));
      return;
    }
    const mj = path.startsWith('/mj/');
    const presented = mj ? request.headers['mj-api-secret'] : request.headers.authorization;
    if (request.method !== 'POST' || presented !== (mj ? key : `Bearer ${key}`)) {
      request.resume();
      send(response, request.method === 'POST' ? 401 : 404, { error: 'not found or wrong key' });
      return;
    }
    void readJson(request).then((body) => {
      const ids = Array.isArray(body.ids) ? body.ids.filter((id) => typeof id === 'string') : [];
      switch (path) {
        case '/mj/submit/imagine': {
          const id = `mj-e2e-${drawings.size + 1}`;
          drawings.set(id, Date.now());
          send(response, 200, { code: 1, description: 'ok', result: id, properties: {} });
          return;
        }
        case '/mj/task/list-by-condition':
          send(
            response,
            200,
            ids.flatMap((id) => {
              const submitted = drawings.get(id);
              if (submitted === undefined) return [];
              return [
                {
                  id,
                  action: 'IMAGINE',
                  status: 'SUCCESS',
                  progress: '100%',
                  imageUrl: `${base}/files/${id}.png`,
                  failReason: '',
                  submitTime: submitted,
                  startTime: submitted,
                  finishTime: submitted + DRAWING_SECONDS * 1000,
                },
              ];
            }),
          );
          return;
        case '/suno/submit/music': {
          const id = `suno-e2e-${songs.size + 1}`;
          songs.set(id, Date.now());
          send(response, 200, { code: 'success', message: '', data: id });
          return;
        }
        case '/suno/fetch':
          send(response, 200, {
            code: 'success',
            message: '',
            data: ids.flatMap((id) => {
              const submitted = songs.get(id);
              if (submitted === undefined) return [];
              const seconds = Math.floor(submitted / 1000);
              return [
                {
                  task_id: id,
                  action: 'MUSIC',
                  status: 'SUCCESS',
                  fail_reason: '',
                  submit_time: seconds,
                  start_time: seconds,
                  finish_time: seconds + 1,
                  data: [
                    {
                      id: `${id}-clip`,
                      title: 'Song',
                      audio_url: `${base}/files/${id}.mp3`,
                      image_url: `${base}/files/${id}-cover.png`,
                    },
                  ],
                },
              ];
            }),
          });
          return;
        default:
          send(response, 404, { error: 'no answer scripted' });
      }
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  base = `http://127.0.0.1:${port}`;
  return {
    baseURL: base,
    key,
    calls: () => [...calls],
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
