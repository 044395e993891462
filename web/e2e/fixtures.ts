import { test as base } from '@playwright/test';

import { startTollgate } from './tollgate-server';
import type { TollgateServer } from './tollgate-server';

/** `server`: a fresh Tollgate for each test; `baseURL` points the page at it. */
export const test = base.extend<{ server: TollgateServer }>({
  server: async ({}, use, testInfo) => {
    const server = await startTollgate();
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
