import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { access, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

/** How long a fresh server may take to answer GET /api/status. */
const START_DEADLINE_MS = 30_000;
/** Pause between two polls of GET /api/status while it starts. */
const POLL_INTERVAL_MS = 100;
/** How long a stopped server may take to exit before it is killed. */
const STOP_DEADLINE_MS = 5_000;

/** A Tollgate server of its own for one test: fresh data directory, free loopback port. */
export interface TollgateServer {
  baseURL: string;
  /** Everything the server printed so far (shown when a test fails). */
  output: () => string;
  stop: () => Promise<void>;
}

/**
 * The binary from TOLLGATE_BIN. A relative path is read from where the command was started
 * (npm's INIT_CWD), so `TOLLGATE_BIN=target/debug/tollgate npm --prefix web run e2e` works
 * from the repository root.
 */
async function binaryPath(): Promise<string> {
  const bin = process.env.TOLLGATE_BIN;
  if (!bin) {
    throw new Error(
      'Set TOLLGATE_BIN to the tollgate binary, e.g. TOLLGATE_BIN=target/debug/tollgate',
    );
  }
  const path = resolve(process.env.INIT_CWD ?? process.cwd(), bin);
  await access(path).catch(() => {
    throw new Error(`TOLLGATE_BIN points to ${path}, which does not exist`);
  });
  return path;
}

/** Asks the OS for a free loopback port (bind to port 0, read it, release it). */
async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (address === null || typeof address === 'string') throw new Error('no TCP port was assigned');
  return address.port;
}

async function statusAnswers(baseURL: string): Promise<boolean> {
  try {
    const response = await fetch(`${baseURL}/api/status`);
    return response.ok && ((await response.json()) as { success?: boolean }).success === true;
  } catch {
    return false;
  }
}

async function waitUntilReady(baseURL: string, child: ChildProcess, output: () => string) {
  const deadline = Date.now() + START_DEADLINE_MS;
  while (!(await statusAnswers(baseURL))) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`tollgate exited before it answered:\n${output()}`);
    }
    if (Date.now() > deadline) {
      throw new Error(
        `tollgate did not answer GET /api/status within ${START_DEADLINE_MS} ms:\n${output()}`,
      );
    }
    await delay(POLL_INTERVAL_MS);
  }
  const page = await fetch(`${baseURL}/`);
  if (!page.ok || !(await page.text()).includes('id="root"')) {
    throw new Error('tollgate does not serve the console: run `npm run build` in web/ first');
  }
}

/**
 * Starts `tollgate --listen 127.0.0.1:<free port> --data-dir <new temp dir> <args>` and waits
 * for it; `args` are more flags (e.g. `--task-poll-interval-ms 100`).
 */
export async function startTollgate(args: readonly string[] = []): Promise<TollgateServer> {
  const bin = await binaryPath();
  const port = await freePort();
  const dataDir = await mkdtemp(join(tmpdir(), 'tollgate-e2e-'));
  const baseURL = `http://127.0.0.1:${port}`;
  const child = spawn(bin, ['--listen', `127.0.0.1:${port}`, '--data-dir', dataDir, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout?.on('data', (chunk: Buffer) => (log += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString()));
  const output = () => log;

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_DEADLINE_MS);
      await exited;
      clearTimeout(timer);
    }
    await rm(dataDir, { recursive: true, force: true });
  };

  try {
    await waitUntilReady(baseURL, child, output);
  } catch (error) {
    await stop();
    throw error;
  }
  return { baseURL, output, stop };
}
