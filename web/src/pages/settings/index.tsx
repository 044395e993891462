import { useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { useSearchParams } from 'react-router';

import { optionsQueryOptions } from '@/api/options';
import type { Options } from '@/api/options';
import { ROLE_ROOT } from '@/api/user';
import { PageHeader } from '@/components/layout/page-header';
import { Alert } from '@/components/ui/alert';
import { Spinner } from '@/components/ui/spinner';
import { Tabs, TabsContent, TabsList, TabsTrigger } from '@/components/ui/tabs';
import { useSession } from '@/stores/session';

import { contentFields, ContentSettings } from './content-settings';
import { sections } from './fields';
import type { SectionId } from './fields';
import { homeBlocks, HomeBlocksSettings } from './home-blocks';
import { LogClear } from './log-clear';
import { OidcDiscovery } from './oidc-discovery';
import { OptionSection } from './option-section';
import { RateLimitRulesEditor } from './rate-limit-rules-editor';
import { RatioEditor } from './ratio-editor';
import { RATIO_KEYS } from './ratios';
import { ResetRatios } from './reset-ratios';
import { UnsetModels } from './unset-models';

import './settings.css';

/** The tabs of spec 02 §2, in order; the active one is kept in `?tab=`. */
export const settingTabs = ['operation', 'ratelimit', 'models', 'system', 'other'] as const;
export type SettingTab = (typeof settingTabs)[number];
/** The tabs an admin who is not root sees: the server sends them only operation options. */
const adminTabs: readonly SettingTab[] = ['operation', 'ratelimit', 'models'];
const isTab = (value: string | null): value is SettingTab =>
  (settingTabs as readonly (string | null)[]).includes(value);

/** The operation tab's sections, in the spec's order (the ratio block comes last). */
const operationSections: SectionId[] = [
  'general',
  'drawing',
  'sensitive',
  'logs',
  'dashboard',
  'monitoring',
  'quota',
  'chats',
  'groups',
];

/** The system tab's sections (spec 01 §2 "System settings"), in new-api's order. */
const systemSections: SectionId[] = [
  'server',
  'worker',
  'payment',
  'login',
  'emailDomain',
  'smtp',
  'github',
  'oidc',
  'wechat',
  'telegram',
  'turnstile',
  'linuxdo',
];

function Section({
  id,
  options,
  readOnly = false,
}: {
  id: SectionId;
  options: Options;
  readOnly?: boolean;
}) {
  const { t } = useTranslation('settings');
  const isRoot = useSession((s) => (s.user?.role ?? 0) >= ROLE_ROOT);
  // Payment callbacks are built from the server address (spec 01 §5).
  const precheck =
    id === 'payment'
      ? () => ((options.ServerAddress ?? '') === '' ? t('toast.serverAddressFirst') : null)
      : undefined;
  return (
    <OptionSection
      id={id}
      title={t(`section.${id}`)}
      fields={sections[id]}
      options={options}
      precheck={precheck}
      tools={id === 'oidc' ? (form) => <OidcDiscovery form={form} /> : undefined}
      readOnly={readOnly}
    >
      {id === 'logs' && !readOnly ? <LogClear /> : null}
      {id === 'modelRatio' && isRoot && !readOnly ? <ResetRatios /> : null}
    </OptionSection>
  );
}

/** The editor starts over when the saved price options change (after a save or elsewhere). */
const ratioKey = (options: Options) => RATIO_KEYS.map((k) => options[k] ?? '').join('\u0000');

/** The operation tab's closing block: model ratios, a visual editor and unpriced models. */
function RatioBlock({ options, readOnly }: { options: Options; readOnly: boolean }) {
  const { t } = useTranslation('settings');
  if (readOnly) return <Section id="modelRatio" options={options} readOnly />;
  return (
    <Tabs defaultValue="modelRatio" className="settings__ratios">
      <TabsList aria-label={t('ratio.label')}>
        <TabsTrigger value="modelRatio">{t('ratio.modelRatio')}</TabsTrigger>
        <TabsTrigger value="visual">{t('ratio.visual')}</TabsTrigger>
        <TabsTrigger value="unset">{t('ratio.unset')}</TabsTrigger>
      </TabsList>
      <TabsContent value="modelRatio">
        <Section key={ratioKey(options)} id="modelRatio" options={options} />
      </TabsContent>
      <TabsContent value="visual">
        <RatioEditor key={ratioKey(options)} options={options} />
      </TabsContent>
      <TabsContent value="unset">
        <UnsetModels options={options} />
      </TabsContent>
    </Tabs>
  );
}

function TabBody({
  tab,
  options,
  readOnly,
}: {
  tab: SettingTab;
  options: Options;
  readOnly: boolean;
}) {
  switch (tab) {
    case 'operation':
      return (
        <>
          {operationSections.map((id) => (
            <Section key={id} id={id} options={options} readOnly={readOnly} />
          ))}
          <RatioBlock options={options} readOnly={readOnly} />
        </>
      );
    case 'ratelimit':
      return (
        <>
          <Section id="rateLimit" options={options} readOnly={readOnly} />
          <RateLimitRulesEditor
            key={options.RateLimitRules ?? ''}
            options={options}
            readOnly={readOnly}
          />
          <Section id="stickyRouting" options={options} readOnly={readOnly} />
        </>
      );
    case 'models':
      return (
        <>
          <Section id="global" options={options} readOnly={readOnly} />
          <Section id="gemini" options={options} readOnly={readOnly} />
          <Section id="claude" options={options} readOnly={readOnly} />
        </>
      );
    case 'system':
      return (
        <>
          {systemSections.map((id) => (
            <Section key={id} id={id} options={options} />
          ))}
        </>
      );
    case 'other':
      return (
        <>
          <ContentSettings key={contentKey(options)} options={options} />
          <HomeBlocksSettings key={blocksKey(options)} options={options} />
        </>
      );
  }
}

/** Remounts the content fields when a stored value changes (each keeps its own draft). */
const contentKey = (options: Options) => contentFields.map((f) => options[f] ?? '').join('\u0000');
const blocksKey = (options: Options) => homeBlocks.map((b) => options[b] ?? '').join('\u0000');

/**
 * /setting (admin, 系统设置): the option tabs of spec 02 §2; each section saves on its own.
 * Only root changes options; another admin sees the operation options read-only.
 */
export function SettingsPage() {
  const { t } = useTranslation('settings');
  const [params, setParams] = useSearchParams();
  const readOnly = useSession((s) => (s.user?.role ?? 0) < ROLE_ROOT);
  const shown = readOnly ? adminTabs : settingTabs;
  const requested = params.get('tab');
  const tab: SettingTab = isTab(requested) && shown.includes(requested) ? requested : 'operation';
  const options = useQuery(optionsQueryOptions);

  return (
    <>
      <PageHeader title={t('title')} />
      {readOnly ? <Alert tone="info">{t('readOnlyNote')}</Alert> : null}
      <Tabs
        value={tab}
        onValueChange={(value) => setParams(value === 'operation' ? {} : { tab: value })}
      >
        <TabsList aria-label={t('tabs.label')}>
          {shown.map((id) => (
            <TabsTrigger key={id} value={id}>
              {t(`tabs.${id}`)}
            </TabsTrigger>
          ))}
        </TabsList>
        {shown.map((id) => (
          <TabsContent key={id} value={id} className="settings__tab">
            {id !== tab ? null : options.isError && !options.data ? (
              <Alert tone="danger">{t('loadFailed')}</Alert>
            ) : !options.data ? (
              <Spinner label={t('loading')} />
            ) : (
              <TabBody tab={id} options={options.data} readOnly={readOnly} />
            )}
          </TabsContent>
        ))}
      </Tabs>
    </>
  );
}
