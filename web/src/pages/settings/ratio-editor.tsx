import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Pencil, Plus, Search, Trash2 } from 'lucide-react';
import { useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';

import type { Options } from '@/api/options';
import { Pager } from '@/components/data-table/pager';
import { Badge } from '@/components/ui/badge';
import { Button } from '@/components/ui/button';
import { Card, CardContent, CardFooter, CardHeader, CardTitle } from '@/components/ui/card';
import { Input } from '@/components/ui/input';
import { Table } from '@/components/ui/table';
import { toast } from '@/stores/toasts';

import { PriceDialog } from './price-dialog';
import { changedOptions, rowsFromOptions, savePriceOptions, upsertRows } from './ratios';
import type { RatioRow } from './ratios';

/** The pricing editor's page size (spec 02 §9). */
const PAGE_SIZE = 10;

const show = (n: number | undefined) => (n === undefined ? '—' : String(n));

/**
 * The visual ratio editor: the models of ModelRatio, CompletionRatio, CacheRatio and ModelPrice
 * as one table; rows are added, edited and deleted locally and saved together.
 */
export function RatioEditor({ options }: { options: Options }) {
  const { t } = useTranslation('settings');
  const queryClient = useQueryClient();
  const [rows, setRows] = useState<RatioRow[]>(() => rowsFromOptions(options));
  const [search, setSearch] = useState('');
  const [page, setPage] = useState(1);
  /** The row in the dialog: a name, '' for a new row, null when closed. */
  const [editing, setEditing] = useState<string | null>(null);

  const changed = useMemo(() => changedOptions(options, rows), [options, rows]);
  const shown = rows.filter((r) => r.name.toLowerCase().includes(search.trim().toLowerCase()));
  const pages = Math.max(1, Math.ceil(shown.length / PAGE_SIZE));
  const current = Math.min(page, pages);
  const visible = shown.slice((current - 1) * PAGE_SIZE, current * PAGE_SIZE);
  const editedRow = rows.find((r) => r.name === editing) ?? { name: '' };

  const save = useMutation({
    mutationFn: savePriceOptions,
    meta: { silent: true },
    onSuccess: (failed, sent) => {
      if (failed === 0) toast.success(t('toast.saved'));
      else toast.error(failed === sent.length ? t('toast.saveFailed') : t('toast.partialFailed'));
      void queryClient.invalidateQueries({ queryKey: ['options'] });
      void queryClient.invalidateQueries({ queryKey: ['pricing'] });
    },
    onError: () => toast.error(t('toast.saveFailed')),
  });

  return (
    <Card className="settings__section" aria-labelledby="settings-ratio-editor-title">
      <CardHeader>
        <CardTitle id="settings-ratio-editor-title">{t('ratio.visual')}</CardTitle>
      </CardHeader>
      <CardContent className="settings__ratio-body">
        <p className="settings__ratio-hint">{t('ratio.hint.overrides')}</p>
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
          <Button variant="secondary" onClick={() => setEditing('')}>
            <Plus aria-hidden />
            {t('ratio.add')}
          </Button>
          {changed.length > 0 ? <Badge tone="yellow">{t('ratio.unsaved')}</Badge> : null}
        </div>
        <Table aria-label={t('ratio.visual')}>
          <thead>
            <tr>
              <th scope="col">{t('ratio.column.name')}</th>
              <th scope="col">{t('ratio.column.mode')}</th>
              <th scope="col">{t('ratio.column.ratio')}</th>
              <th scope="col">{t('ratio.column.completion')}</th>
              <th scope="col">{t('ratio.column.cache')}</th>
              <th scope="col">{t('ratio.column.price')}</th>
              <th scope="col">{t('ratio.column.actions')}</th>
            </tr>
          </thead>
          <tbody>
            {visible.length === 0 ? (
              <tr>
                <td colSpan={7} className="settings__ratio-empty">
                  {t('ratio.empty')}
                </td>
              </tr>
            ) : (
              visible.map((row) => (
                <tr key={row.name} data-model={row.name}>
                  <td>
                    <code>{row.name}</code>
                  </td>
                  <td>
                    {row.price !== undefined ? (
                      <Badge tone="purple">{t('ratio.mode.call')}</Badge>
                    ) : (
                      <Badge tone="blue">{t('ratio.mode.tokens')}</Badge>
                    )}
                  </td>
                  <td>{show(row.ratio)}</td>
                  <td>{show(row.completion)}</td>
                  <td>{show(row.cache)}</td>
                  <td>{row.price === undefined ? '—' : `$${row.price}`}</td>
                  <td className="settings__ratio-actions">
                    <Button
                      variant="ghost"
                      size="icon"
                      aria-label={t('ratio.edit', { name: row.name })}
                      onClick={() => setEditing(row.name)}
                    >
                      <Pencil aria-hidden />
                    </Button>
                    <Button
                      variant="ghost"
                      size="icon"
                      aria-label={t('ratio.delete', { name: row.name })}
                      onClick={() => setRows(rows.filter((r) => r.name !== row.name))}
                    >
                      <Trash2 aria-hidden />
                    </Button>
                  </td>
                </tr>
              ))
            )}
          </tbody>
        </Table>
        <Pager
          page={current}
          pageSize={PAGE_SIZE}
          total={shown.length}
          onPage={setPage}
          onPageSize={() => undefined}
          sizes={[PAGE_SIZE]}
        />
      </CardContent>
      <CardFooter>
        <Button
          disabled={save.isPending}
          onClick={() => {
            if (changed.length === 0) toast.info(t('toast.noChanges'));
            else save.mutate(changed);
          }}
        >
          {t('ratio.save')}
        </Button>
      </CardFooter>
      <PriceDialog
        open={editing !== null}
        onOpenChange={(open) => (open ? undefined : setEditing(null))}
        title={editing ? t('ratio.dialog.editTitle', { name: editing }) : t('ratio.add')}
        description={t('ratio.dialog.description')}
        initial={editedRow}
        names={[]}
        taken={new Set(rows.map((r) => r.name).filter((name) => name !== editing))}
        onSubmit={(updated) => {
          const kept = rows.filter((r) => r.name !== editing);
          setRows(upsertRows(kept, updated));
          setEditing(null);
        }}
      />
    </Card>
  );
}
