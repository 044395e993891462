import { i18n } from '@/i18n';
import { usePreferences } from '@/stores/preferences';
import type { Language, Theme } from '@/stores/preferences';

/** Applies the theme and language preferences to the document and i18next, now and on change. */
export function syncPreferences(): () => void {
  const apply = ({ theme, language }: { theme: Theme; language: Language }) => {
    const root = document.documentElement;
    root.dataset.theme = theme;
    root.lang = language === 'zh' ? 'zh-CN' : 'en';
    if (i18n.language !== language) void i18n.changeLanguage(language);
  };
  apply(usePreferences.getState());
  return usePreferences.subscribe(apply);
}
