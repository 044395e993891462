import { cleanup, configure } from '@testing-library/react';
import { afterEach } from 'vitest';

import { useSession } from '@/stores/session';

import { settleRenderedApps } from './render-app';

// CI runs on 2 shared cores: lazy route chunks can take longer than the 1 s default to load.
configure({ asyncUtilTimeout: 5000 });

// jsdom has no layout: radix measures elements with ResizeObserver, which may observe nothing here.
class NoopResizeObserver {
  observe() {}
  unobserve() {}
  disconnect() {}
}
globalThis.ResizeObserver ??= NoopResizeObserver;

afterEach(async () => {
  await settleRenderedApps();
  cleanup();
  useSession.getState().clearUser();
  localStorage.clear();
});
