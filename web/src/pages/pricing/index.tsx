import { useQuery } from '@tanstack/react-query';
import { BookOpen } from 'lucide-react';
import { useMemo, useState, useSyncExternalStore } from 'react';
import { useTranslation } from 'react-i18next';

import { pricingQueryOptions } from '@/api/pricing';
import type { PricingModel } from '@/api/pricing';
import { useStatus } from '@/api/status';
import { IntegrationGuide } from '@/components/common/integration-guide';
import { Pager } from '@/components/data-table/pager';
import { PageHeader } from '@/components/layout/page-header';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Input } from '@/components/ui/input';
import { Select } from '@/components/ui/select';
import { Spinner } from '@/components/ui/spinner';
import { Switch } from '@/components/ui/switch';

import { ALL_PROVIDERS, OTHER_PROVIDER, providerOf, providers } from './prices';
import type { Currency } from './prices';
import { PricingCards, PricingTable } from './pricing-rows';

import '@/components/data-table/data-table.css';
import './pricing.css';

/** Page sizes (spec 02 §9): the desktop table's and the mobile cards'; 10 by default. */
const DESKTOP_SIZES = [10, 20, 50, 100] as const;
const MOBILE_SIZES = [5, 10, 20, 50] as const;
const DEFAULT_SIZE = 10;
/** The group whose prices show first (spec 02 §9). */
const DEFAULT_GROUP = 'default';
const MOBILE_QUERY = '(max-width: 768px)';

function useIsMobile(): boolean {
  return useSyncExternalStore(
    (notify) => {
      const media = window.matchMedia?.(MOBILE_QUERY);
      media?.addEventListener('change', notify);
      return () => media?.removeEventListener('change', notify);
    },
    () => window.matchMedia?.(MOBILE_QUERY).matches ?? false,
  );
}

/** /pricing (public, 模型价格): providers, search, group, currency, ratios, integration. */
export function PricingPage() {
  const { t } = useTranslation('pricing');
  const status = useStatus();
  const mobile = useIsMobile();
  const pricing = useQuery(pricingQueryOptions);
  const [provider, setProvider] = useState(ALL_PROVIDERS);
  const [search, setSearch] = useState('');
  const [group, setGroup] = useState(DEFAULT_GROUP);
  const [currency, setCurrency] = useState<Currency>('CNY');
  const [showRatio, setShowRatio] = useState(false);
  const [page, setPage] = useState(1);
  const [pageSize, setPageSize] = useState(DEFAULT_SIZE);
  const [guide, setGuide] = useState<{ open: boolean; model?: string }>({ open: false });

  const models = useMemo(() => pricing.data?.data ?? [], [pricing.data]);
  const groups = useMemo(() => {
    const names = new Set([DEFAULT_GROUP, ...Object.keys(pricing.data?.usable_group ?? {})]);
    return [...names];
  }, [pricing.data]);
  const inGroup = useMemo(
    () => models.filter((m) => m.enable_groups.includes(group)),
    [models, group],
  );
  const counts = useMemo(() => {
    const map = new Map<string, number>();
    for (const m of inGroup)
      map.set(providerOf(m.model_name), (map.get(providerOf(m.model_name)) ?? 0) + 1);
    return map;
  }, [inGroup]);
  const needle = search.trim().toLowerCase();
  const shown = inGroup.filter(
    (m) =>
      (provider === ALL_PROVIDERS || providerOf(m.model_name) === provider) &&
      (needle === '' ||
        m.model_name.toLowerCase().includes(needle) ||
        m.model_description.toLowerCase().includes(needle)),
  );
  const sizes = mobile ? MOBILE_SIZES : DESKTOP_SIZES;
  const pages = Math.max(1, Math.ceil(shown.length / pageSize));
  const current = Math.min(page, pages);
  const rows: PricingModel[] = shown.slice((current - 1) * pageSize, current * pageSize);
  const groupRatio = pricing.data?.group_ratio[group] ?? 1;
  const filterBar = [
    ...providers.filter((p) => counts.has(p.id)).map((p) => ({ id: p.id, name: p.name })),
    ...(counts.has(OTHER_PROVIDER) ? [{ id: OTHER_PROVIDER, name: t('provider.other') }] : []),
  ];
  const reset = () => setPage(1);
  const rowProps = {
    models: rows,
    groupRatio,
    currency,
    priceRatio: status.price,
    showRatio,
    onGuide: (model: string) => setGuide({ open: true, model }),
  };

  return (
    <>
      <PageHeader
        title={t('title')}
        description={t('description')}
        actions={
          <Button variant="secondary" onClick={() => setGuide({ open: true })}>
            <BookOpen aria-hidden />
            {t('guide')}
          </Button>
        }
      />
      <div className="pricing__providers" role="group" aria-label={t('provider.label')}>
        <Button
          size="sm"
          variant={provider === ALL_PROVIDERS ? 'primary' : 'secondary'}
          aria-pressed={provider === ALL_PROVIDERS}
          onClick={() => {
            setProvider(ALL_PROVIDERS);
            reset();
          }}
        >
          {t('provider.all', { count: inGroup.length })}
        </Button>
        {filterBar.map((p) => (
          <Button
            key={p.id}
            size="sm"
            variant={provider === p.id ? 'primary' : 'secondary'}
            aria-pressed={provider === p.id}
            onClick={() => {
              setProvider(p.id);
              reset();
            }}
          >
            {t('provider.item', { name: p.name, count: counts.get(p.id) ?? 0 })}
          </Button>
        ))}
      </div>
      <div className="data-toolbar">
        <Input
          type="search"
          aria-label={t('search')}
          placeholder={t('search')}
          value={search}
          onChange={(e) => {
            setSearch(e.target.value);
            reset();
          }}
        />
        <Select
          aria-label={t('group.label')}
          className="pricing__group"
          value={group}
          onChange={(e) => {
            setGroup(e.target.value);
            setProvider(ALL_PROVIDERS);
            reset();
          }}
        >
          {groups.map((name) => (
            <option key={name} value={name}>
              {t('group.option', {
                name,
                desc: pricing.data?.usable_group[name] || name,
                ratio: pricing.data?.group_ratio[name] ?? 1,
              })}
            </option>
          ))}
        </Select>
        <Select
          aria-label={t('currency.label')}
          className="pricing__currency"
          value={currency}
          onChange={(e) => setCurrency(e.target.value as Currency)}
        >
          <option value="CNY">{t('currency.CNY')}</option>
          <option value="USD">{t('currency.USD')}</option>
        </Select>
        <label className="pricing__switch">
          <Switch
            checked={showRatio}
            onCheckedChange={setShowRatio}
            aria-label={t('ratio.toggle')}
          />
          {t('ratio.toggle')}
        </label>
      </div>
      {pricing.isError && !pricing.data ? (
        <Alert tone="danger">{t('loadFailed')}</Alert>
      ) : !pricing.data ? (
        <Spinner label={t('loading')} />
      ) : mobile ? (
        <PricingCards {...rowProps} />
      ) : (
        <PricingTable {...rowProps} />
      )}
      <Pager
        page={current}
        pageSize={pageSize}
        total={shown.length}
        sizes={sizes}
        onPage={setPage}
        onPageSize={(size) => {
          setPageSize(size);
          reset();
        }}
      />
      <IntegrationGuide
        open={guide.open}
        model={guide.model}
        onOpenChange={(open) => setGuide((g) => ({ ...g, open }))}
      />
    </>
  );
}
