import { z } from 'zod/mini';
import { create } from 'zustand';
import { persist } from 'zustand/middleware';

import { jsonKey, keyedStorage, textKey } from '@/lib/keyed-storage';

export const languages = ['zh', 'en'] as const;
export type Language = (typeof languages)[number];
/** Chinese is the fallback language (spec 01 §4). */
export const fallbackLanguage: Language = 'zh';

export const themes = ['light', 'dark'] as const;
export type Theme = (typeof themes)[number];

/** Page sizes offered by list pages; 10 is the default (spec 01 §9). */
export const pageSizes = [10, 20, 50, 100] as const;
export type PageSize = (typeof pageSizes)[number];

function systemTheme(): Theme {
  return typeof window !== 'undefined' &&
    window.matchMedia?.('(prefers-color-scheme: dark)').matches
    ? 'dark'
    : 'light';
}

const preferencesSchema = z.object({
  theme: z.catch(z.enum(themes), systemTheme),
  language: z.catch(z.enum(languages), fallbackLanguage),
  pageSize: z.catch(z.literal(pageSizes), pageSizes[0]),
  /** Null until the user chooses: the status's `default_collapse_sidebar` applies then. */
  sidebarCollapsed: z.catch(z.nullable(z.boolean()), null),
});

type Preferences = z.infer<typeof preferencesSchema>;

interface PreferencesState extends Preferences {
  setTheme: (theme: Theme) => void;
  setLanguage: (language: Language) => void;
  setPageSize: (pageSize: PageSize) => void;
  setSidebarCollapsed: (collapsed: boolean) => void;
}

/** Client preferences, each persisted under the local storage key named by spec 01 §3. */
export const usePreferences = create<PreferencesState>()(
  persist(
    (set) => ({
      ...preferencesSchema.parse({}),
      setTheme: (theme) => set({ theme }),
      setLanguage: (language) => set({ language }),
      setPageSize: (pageSize) => set({ pageSize }),
      setSidebarCollapsed: (sidebarCollapsed) => set({ sidebarCollapsed }),
    }),
    {
      name: 'preferences',
      storage: keyedStorage<Preferences>({
        theme: textKey('theme-mode'),
        language: textKey('i18nextLng'),
        pageSize: jsonKey('page-size'),
        sidebarCollapsed: jsonKey('default_collapse_sidebar'),
      }),
      partialize: ({ theme, language, pageSize, sidebarCollapsed }) => ({
        theme,
        language,
        pageSize,
        sidebarCollapsed,
      }),
      merge: (persisted, current) => ({ ...current, ...preferencesSchema.parse(persisted ?? {}) }),
    },
  ),
);
