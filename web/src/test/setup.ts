import { cleanup, configure } from '@testing-library/react';
import { afterEach } from 'vitest';

// CI runs on 2 shared cores: lazy route chunks can take longer than the 1 s default to load.
configure({ asyncUtilTimeout: 5000 });

// jsdom has no layout: radix measures elements with ResizeObserver, which may observe nothing here.
class NoopResizeObserver {
  observe() {}
  unobserve() {}
  disconnect() {}
}
globalThis.ResizeObserver ??= NoopResizeObserver;

afterEach(() => {
  cleanup();
  localStorage.clear();
});
