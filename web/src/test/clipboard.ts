import { vi } from 'vitest';

/** Installs a clipboard whose `writeText` resolves, or rejects when `refuse` is set. */
export function stubClipboard(refuse = false) {
  const writeText = vi.fn(async () => {
    if (refuse) throw new DOMException('denied', 'NotAllowedError');
  });
  Object.defineProperty(navigator, 'clipboard', {
    value: { writeText },
    configurable: true,
  });
  return writeText;
}
