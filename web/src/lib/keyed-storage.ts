import type { PersistStorage, StorageValue } from 'zustand/middleware';

/** How one persisted field is written to its own local storage key. */
export interface KeyedField {
  key: string;
  /** `text` stores strings as they are (`theme-mode` = `dark`); `json` stores JSON (`page-size` = `10`). */
  codec: 'text' | 'json';
}

export const textKey = (key: string): KeyedField => ({ key, codec: 'text' });
export const jsonKey = (key: string): KeyedField => ({ key, codec: 'json' });

/**
 * A zustand `persist` storage that writes each field to its own local storage key, so the
 * browser keeps the spec's keys (`user`, `theme-mode`, `i18nextLng`, …) rather than one JSON blob.
 * Values read back are untrusted: the store validates them in its `merge`.
 */
export function keyedStorage<S extends object>(fields: {
  [K in keyof S]: KeyedField;
}): PersistStorage<Partial<Record<keyof S, unknown>>> {
  const entries = Object.entries(fields) as [keyof S & string, KeyedField][];
  return {
    getItem() {
      const state: Partial<Record<keyof S, unknown>> = {};
      let found = false;
      for (const [name, field] of entries) {
        const raw = localStorage.getItem(field.key);
        if (raw === null) continue;
        found = true;
        state[name] = field.codec === 'text' ? raw : parseJson(raw);
      }
      return found ? { state, version: 0 } : null;
    },
    setItem(_name, value: StorageValue<Partial<Record<keyof S, unknown>>>) {
      for (const [name, field] of entries) {
        const v = value.state[name];
        if (v === undefined || v === null) {
          localStorage.removeItem(field.key);
        } else {
          localStorage.setItem(field.key, field.codec === 'text' ? String(v) : JSON.stringify(v));
        }
      }
    },
    removeItem() {
      for (const [, field] of entries) localStorage.removeItem(field.key);
    },
  };
}

function parseJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}
