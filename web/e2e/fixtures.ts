import { test as base } from '@playwright/test';

import { startTollgate } from './tollgate-server';
import type { TollgateServer } from './tollgate-server';

/**
 * `server`: a fresh Tollgate for each test, started with the flags of the option `serverArgs`
 * (none unless a file says `test.use({ serverArgs: [...] })`); `baseURL` points the page at it.
 */
export const test = base.extend<{ server: TollgateServer; serverArgs: string[] }>({
  serverArgs: [[], { option: true }],
  server: async ({ serverArgs }, use, testInfo) => {
    const server = await startTollgate(serverArgs);
    try {
      await use(server);
    } finally {
      if (testInfo.status !== testInfo.expectedStatus) {
        await testInfo.attach('tollgate.log', { body: server.output(), contentType: 'text/plain' });
      }
      await server.stop();
    }
  },
  baseURL: async ({ server }, use) => {
    await use(server.baseURL);
  },
});

export { expect } from '@playwright/test';
