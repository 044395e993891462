import { afterEach, describe, expect, it, vi } from 'vitest';

import { jsonKey, keyedStorage, textKey } from './keyed-storage';

afterEach(() => {
  localStorage.clear();
  vi.resetModules();
});

describe('keyedStorage', () => {
  const storage = keyedStorage<{ theme: string; pageSize: number; collapsed: boolean }>({
    theme: textKey('theme-mode'),
    pageSize: jsonKey('page-size'),
    collapsed: jsonKey('default_collapse_sidebar'),
  });

  it('writes each field under its own key', () => {
    storage.setItem('ignored', {
      state: { theme: 'dark', pageSize: 20, collapsed: true },
      version: 0,
    });
    expect(localStorage.getItem('theme-mode')).toBe('dark');
    expect(localStorage.getItem('page-size')).toBe('20');
    expect(localStorage.getItem('default_collapse_sidebar')).toBe('true');
  });

  it('reads the keys back, leaving out absent and unparsable ones', () => {
    localStorage.setItem('theme-mode', 'light');
    localStorage.setItem('page-size', '{broken');
    expect(storage.getItem('ignored')).toEqual({
      state: { theme: 'light', pageSize: undefined },
      version: 0,
    });
  });

  it('answers null when none of its keys exist', () => {
    expect(storage.getItem('ignored')).toBeNull();
  });
});

describe('preferences store', () => {
  it('hydrates from the spec keys and falls back on invalid values', async () => {
    localStorage.setItem('theme-mode', 'dark');
    localStorage.setItem('i18nextLng', 'fr');
    localStorage.setItem('page-size', '7');
    const { usePreferences } = await import('@/stores/preferences');
    const state = usePreferences.getState();
    expect(state.theme).toBe('dark');
    expect(state.language).toBe('zh');
    expect(state.pageSize).toBe(10);
    expect(state.sidebarCollapsed, 'not chosen yet').toBeNull();
  });

  it('persists changes under the spec keys', async () => {
    const { usePreferences } = await import('@/stores/preferences');
    usePreferences.getState().setLanguage('en');
    usePreferences.getState().setSidebarCollapsed(true);
    expect(localStorage.getItem('i18nextLng')).toBe('en');
    expect(localStorage.getItem('default_collapse_sidebar')).toBe('true');
  });
});
