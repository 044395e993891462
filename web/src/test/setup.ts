import { cleanup } from '@testing-library/react';
import { afterEach } from 'vitest';

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
