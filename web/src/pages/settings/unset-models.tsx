import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Search, Tag } from 'lucide-react';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';

import type { Options } from '@/api/options';
import { pricingQueryOptions } from '@/api/pricing';
import { Pager } from '@/components/data-table/pager';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Card, CardContent, CardHeader, CardTitle } from '@/components/ui/card';
import { Input } from '@/components/ui/input';
import { Spinner } from '@/components/ui/spinner';
import { Table } from '@/components/ui/table';
import { toast } from '@/stores/toasts';

import { PriceDialog } from './price-dialog';
import { changedOptions, rowsFromOptions, savePriceOptions, upsertRows } from './ratios';
import type { RatioRow } from './ratios';

/** The unset-model table's page sizes (spec 02 §9). */
const PAGE_SIZES = [10, 20, 50, 100] as const;

/**
 * Models without a ratio: what enabled channels serve but nothing prices (GET /api/pricing's
 * rows with price_set false; the relay refuses them). One row or a selection is priced in one
 * step: the price is written into the options at once.
 */
export function UnsetModels({ options }: { options: Options }) {
  const { t } = useTranslation('settings');
  const queryClient = useQueryClient();
  const pricing = useQuery(pricingQueryOptions);
  const [search, setSearch] = useState('');
  const [page, setPage] = useState(1);
  const [pageSize, setPageSize] = useState<number>(PAGE_SIZES[0]);
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  /** The models in the price dialog; empty when it is closed. */
  const [pricingNames, setPricingNames] = useState<string[]>([]);

  const unset = (pricing.data?.data ?? []).filter((m) => !m.price_set);
  const shown = unset.filter((m) =>
    m.model_name.toLowerCase().includes(search.trim().toLowerCase()),
  );
  const pages = Math.max(1, Math.ceil(shown.length / pageSize));
  const current = Math.min(page, pages);
  const visible = shown.slice((current - 1) * pageSize, current * pageSize);
  const live = new Set(unset.map((m) => m.model_name));
  const chosen = [...selected].filter((name) => live.has(name));

  const save = useMutation({
    mutationFn: (rows: RatioRow[]) =>
      savePriceOptions(changedOptions(options, upsertRows(rowsFromOptions(options), rows))),
    meta: { silent: true },
    onSuccess: (failed) => {
      if (failed === 0) {
        toast.success(t('toast.saved'));
        setPricingNames([]);
        setSelected(new Set());
      } else {
        toast.error(t('toast.saveFailed'));
      }
      void queryClient.invalidateQueries({ queryKey: ['options'] });
      void queryClient.invalidateQueries({ queryKey: ['pricing'] });
    },
    onError: () => toast.error(t('toast.saveFailed')),
  });

  const toggle = (name: string, on: boolean) => {
    const next = new Set(selected);
    if (on) next.add(name);
    else next.delete(name);
    setSelected(next);
  };
  const allVisible = visible.length > 0 && visible.every((m) => selected.has(m.model_name));

  return (
    <Card className="settings__section" aria-labelledby="settings-unset-title">
      <CardHeader>
        <CardTitle id="settings-unset-title">{t('ratio.unset')}</CardTitle>
      </CardHeader>
      <CardContent className="settings__ratio-body">
        <p className="settings__ratio-hint">{t('ratio.hint.unset')}</p>
        {pricing.isError && !pricing.data ? (
          <Alert tone="danger">{t('ratio.loadFailed')}</Alert>
        ) : !pricing.data ? (
          <Spinner label={t('loading')} />
        ) : (
          <>
            <div className="settings__ratio-toolbar">
              <div className="settings__ratio-search">
                <Search aria-hidden />
                <Input
                  type="search"
                  aria-label={t('ratio.search')}
                  placeholder={t('ratio.search')}
                  value={search}
                  onChange={(e) => {
                    setSearch(e.target.value);
                    setPage(1);
                  }}
                />
              </div>
              <Button
                variant="secondary"
                onClick={() => {
                  if (chosen.length === 0) toast.error(t('ratio.noneSelected'));
                  else setPricingNames(chosen);
                }}
              >
                <Tag aria-hidden />
                {t('ratio.setSelected', { count: chosen.length })}
              </Button>
            </div>
            <Table aria-label={t('ratio.unset')}>
              <thead>
                <tr>
                  <th scope="col">
                    <input
                      type="checkbox"
                      aria-label={t('ratio.selectAll')}
                      checked={allVisible}
                      onChange={(e) => {
                        const next = new Set(selected);
                        for (const m of visible) {
                          if (e.target.checked) next.add(m.model_name);
                          else next.delete(m.model_name);
                        }
                        setSelected(next);
                      }}
                    />
                  </th>
                  <th scope="col">{t('ratio.column.name')}</th>
                  <th scope="col">{t('ratio.column.groups')}</th>
                  <th scope="col">{t('ratio.column.actions')}</th>
                </tr>
              </thead>
              <tbody>
                {visible.length === 0 ? (
                  <tr>
                    <td colSpan={4} className="settings__ratio-empty">
                      {unset.length === 0 ? t('ratio.allPriced') : t('ratio.empty')}
                    </td>
                  </tr>
                ) : (
                  visible.map((m) => (
                    <tr key={m.model_name} data-model={m.model_name}>
                      <td>
                        <input
                          type="checkbox"
                          aria-label={t('ratio.select', { name: m.model_name })}
                          checked={selected.has(m.model_name)}
                          onChange={(e) => toggle(m.model_name, e.target.checked)}
                        />
                      </td>
                      <td>
                        <code>{m.model_name}</code>
                      </td>
                      <td>{m.enable_groups.join(', ')}</td>
                      <td>
                        <Button
                          variant="ghost"
                          size="sm"
                          aria-label={t('ratio.setPriceFor', { name: m.model_name })}
                          onClick={() => setPricingNames([m.model_name])}
                        >
                          {t('ratio.setPrice')}
                        </Button>
                      </td>
                    </tr>
                  ))
                )}
              </tbody>
            </Table>
            <Pager
              page={current}
              pageSize={pageSize}
              total={shown.length}
              onPage={setPage}
              onPageSize={(size) => {
                setPageSize(size);
                setPage(1);
              }}
              sizes={PAGE_SIZES}
            />
          </>
        )}
      </CardContent>
      <PriceDialog
        open={pricingNames.length > 0}
        onOpenChange={(open) => (open ? undefined : setPricingNames([]))}
        title={t('ratio.setPrice')}
        description={t('ratio.dialog.setDescription', {
          count: pricingNames.length,
          names: pricingNames.join(', '),
        })}
        initial={{ name: pricingNames[0] ?? '' }}
        names={pricingNames}
        taken={new Set()}
        busy={save.isPending}
        onSubmit={(rows) => save.mutate(rows)}
      />
    </Card>
  );
}
