import { describe, expect, it } from 'vitest';

import serverErrorCodes from '@/api/error-codes.json';

const zh = import.meta.glob<Record<string, unknown>>('./locales/zh/*.json', {
  eager: true,
  import: 'default',
});
const en = import.meta.glob<Record<string, unknown>>('./locales/en/*.json', {
  eager: true,
  import: 'default',
});

function keys(value: unknown, prefix = ''): string[] {
  if (typeof value !== 'object' || value === null) return [prefix];
  return Object.entries(value).flatMap(([key, child]) =>
    keys(child, prefix ? `${prefix}.${key}` : key),
  );
}

const namespace = (path: string) => path.split('/').pop()?.replace('.json', '');

describe('locales', () => {
  it('zh and en have the same namespaces', () => {
    expect(Object.keys(en).map(namespace).sort()).toEqual(Object.keys(zh).map(namespace).sort());
  });

  for (const [path, zhResource] of Object.entries(zh)) {
    it(`${namespace(path)}: zh and en have identical key sets`, () => {
      const enResource = en[path.replace('/zh/', '/en/')];
      expect(keys(enResource).sort()).toEqual(keys(zhResource).sort());
    });

    it(`${namespace(path)}: every value is a non-empty string`, () => {
      const leaves = (value: unknown): unknown[] =>
        typeof value === 'object' && value !== null
          ? Object.values(value).flatMap(leaves)
          : [value];
      for (const resource of [zhResource, en[path.replace('/zh/', '/en/')]]) {
        for (const leaf of leaves(resource)) {
          expect(typeof leaf === 'string' && leaf.length > 0, String(leaf)).toBe(true);
        }
      }
    });
  }

  it('every error code the server defines has a zh and an en text', () => {
    // error-codes.json is written by the server's test (src/error/codes.rs), which fails when
    // the list and the server's codes differ.
    expect(serverErrorCodes.length).toBeGreaterThan(100);
    for (const lang of [zh, en]) {
      const common = Object.entries(lang).find(([path]) => path.endsWith('/common.json'))?.[1];
      const texts = (common?.error as { code?: Record<string, unknown> } | undefined)?.code ?? {};
      const missing = serverErrorCodes.filter(
        (code) => typeof texts[code] !== 'string' || texts[code] === '',
      );
      expect(missing).toEqual([]);
    }
  });

  it('zh puts a space between Chinese and Latin letters or digits (spec texts aside)', () => {
    const crowded = /[\u4e00-\u9fff][A-Za-z0-9]|[A-Za-z0-9][\u4e00-\u9fff]/;
    const found = Object.entries(zh).flatMap(([path, resource]) =>
      leafEntries(resource)
        .filter(([, text]) => crowded.test(text) && !SPEC_VERBATIM.has(text))
        .map(([key, text]) => `${namespace(path)}:${key} ${text}`),
    );
    expect(found).toEqual([]);
  });
});

/** zh texts the spec gives verbatim (kept as written even where they crowd Latin and Chinese). */
const SPEC_VERBATIM = new Set(['密码长度至少为8个字符']);

function leafEntries(value: unknown, prefix = ''): [string, string][] {
  if (typeof value === 'string') return [[prefix, value]];
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, child]) =>
    leafEntries(child, prefix ? `${prefix}.${key}` : key),
  );
}
