import i18next from 'i18next';
import { initReactI18next } from 'react-i18next';

import { fallbackLanguage, usePreferences } from '@/stores/preferences';

import enAudit from './locales/en/audit.json';
import enAuth from './locales/en/auth.json';
import enChannels from './locales/en/channels.json';
import enCommon from './locales/en/common.json';
import enContent from './locales/en/content.json';
import enDetail from './locales/en/detail.json';
import enLimits from './locales/en/limits.json';
import enLog from './locales/en/log.json';
import enPersonal from './locales/en/personal.json';
import enPlayground from './locales/en/playground.json';
import enPricing from './locales/en/pricing.json';
import enRedemption from './locales/en/redemption.json';
import enSettings from './locales/en/settings.json';
import enSetup from './locales/en/setup.json';
import enTask from './locales/en/task.json';
import enTokens from './locales/en/tokens.json';
import enTopUp from './locales/en/topup.json';
import enUsers from './locales/en/users.json';
import zhAudit from './locales/zh/audit.json';
import zhAuth from './locales/zh/auth.json';
import zhChannels from './locales/zh/channels.json';
import zhCommon from './locales/zh/common.json';
import zhContent from './locales/zh/content.json';
import zhDetail from './locales/zh/detail.json';
import zhLimits from './locales/zh/limits.json';
import zhLog from './locales/zh/log.json';
import zhPersonal from './locales/zh/personal.json';
import zhPlayground from './locales/zh/playground.json';
import zhPricing from './locales/zh/pricing.json';
import zhRedemption from './locales/zh/redemption.json';
import zhSettings from './locales/zh/settings.json';
import zhSetup from './locales/zh/setup.json';
import zhTask from './locales/zh/task.json';
import zhTokens from './locales/zh/tokens.json';
import zhTopUp from './locales/zh/topup.json';
import zhUsers from './locales/zh/users.json';

/** zh is the typed source of every key; en must carry the same keys (see locales.test.ts). */
export const resources = {
  zh: {
    common: zhCommon,
    auth: zhAuth,
    audit: zhAudit,
    setup: zhSetup,
    users: zhUsers,
    personal: zhPersonal,
    channels: zhChannels,
    tokens: zhTokens,
    redemption: zhRedemption,
    topup: zhTopUp,
    pricing: zhPricing,
    log: zhLog,
    limits: zhLimits,
    task: zhTask,
    detail: zhDetail,
    settings: zhSettings,
    content: zhContent,
    playground: zhPlayground,
  },
  en: {
    common: enCommon,
    auth: enAuth,
    audit: enAudit,
    setup: enSetup,
    users: enUsers,
    personal: enPersonal,
    channels: enChannels,
    tokens: enTokens,
    redemption: enRedemption,
    topup: enTopUp,
    pricing: enPricing,
    log: enLog,
    limits: enLimits,
    task: enTask,
    detail: enDetail,
    settings: enSettings,
    content: enContent,
    playground: enPlayground,
  },
} as const;

export const defaultNS = 'common';

export const i18n = i18next.createInstance();

void i18n.use(initReactI18next).init({
  resources,
  lng: usePreferences.getState().language,
  fallbackLng: fallbackLanguage,
  defaultNS,
  ns: Object.keys(resources.zh),
  interpolation: { escapeValue: false },
  initAsync: false,
});
