import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Copy, Plus, Search, Trash2 } from 'lucide-react';
import { useEffect, useRef, useState } from 'react';
import type { FormEvent } from 'react';
import { useTranslation } from 'react-i18next';

import {
  CODE_DISABLED,
  CODE_UNUSED,
  deleteInvalidRedemptions,
  deleteRedemption,
  redemptionsQueryOptions,
  setRedemptionStatus,
} from '@/api/redemptions';
import type { Redemption, RedemptionListQuery } from '@/api/redemptions';
import { ConfirmDialog } from '@/components/common/confirm-dialog';
import { Pager } from '@/components/data-table/pager';
import { PageHeader } from '@/components/layout/page-header';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Input } from '@/components/ui/input';
import { Spinner } from '@/components/ui/spinner';
import { copyText } from '@/stores/manual-copy';
import { pageSizes, usePreferences } from '@/stores/preferences';
import type { PageSize } from '@/stores/preferences';
import { toast } from '@/stores/toasts';

import { CodesDialog } from './codes-dialog';
import { RedemptionEditor } from './redemption-editor';
import { RedemptionsTable } from './redemptions-table';
import type { CodeAction } from './redemptions-table';

import '@/components/data-table/data-table.css';
import './redemptions.css';

/** The editor's id is cleared this long after it closes, so the closing drawer keeps its form. */
const CLEAR_EDITOR_MS = 500;

type Confirming = { kind: 'one'; code: Redemption } | { kind: 'invalid' };

/** /redemption (admin, 兑换码管理): search, server paging, create, copy, enable/disable, edit. */
export function RedemptionsPage() {
  const { t } = useTranslation('redemption');
  const queryClient = useQueryClient();
  const pageSize = usePreferences((s) => s.pageSize);
  const setPageSize = usePreferences((s) => s.setPageSize);
  const [keyword, setKeyword] = useState('');
  const [draft, setDraft] = useState('');
  const [page, setPage] = useState(1);
  const [selected, setSelected] = useState<number[]>([]);
  const [editor, setEditor] = useState<{ open: boolean; id: number | null }>({
    open: false,
    id: null,
  });
  const [created, setCreated] = useState<{ name: string; codes: string[] } | null>(null);
  const [confirming, setConfirming] = useState<Confirming | null>(null);
  const clearTimer = useRef<ReturnType<typeof setTimeout>>(undefined);
  useEffect(() => () => clearTimeout(clearTimer.current), []);

  const query: RedemptionListQuery = { keyword, page, pageSize };
  const codes = useQuery(redemptionsQueryOptions(query));
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['redemptions'] });

  const act = useMutation({
    mutationFn: async (run: () => Promise<string>) => run(),
    onSuccess: (text) => {
      if (text) toast.success(text);
      void refresh();
    },
  });

  const openEditor = (id: number | null) => {
    clearTimeout(clearTimer.current);
    setEditor({ open: true, id });
  };
  const closeEditor = () => {
    setEditor((e) => ({ ...e, open: false }));
    clearTimer.current = setTimeout(
      () => setEditor((e) => (e.open ? e : { ...e, id: null })),
      CLEAR_EDITOR_MS,
    );
  };

  const onAction = (code: Redemption, action: CodeAction) => {
    switch (action) {
      case 'copy':
        void copyText(code.key, t('toast.copied'));
        return;
      case 'enable':
      case 'disable':
        act.mutate(async () => {
          await setRedemptionStatus(code.id, action === 'enable' ? CODE_UNUSED : CODE_DISABLED);
          return t('toast.done');
        });
        return;
      case 'edit':
        openEditor(code.id);
        return;
      case 'delete':
        setConfirming({ kind: 'one', code });
        return;
    }
  };

  const copySelected = () => {
    const keys = (codes.data?.items ?? []).filter((c) => selected.includes(c.id)).map((c) => c.key);
    if (keys.length === 0) {
      toast.error(t('toast.selectOne'));
      return;
    }
    void copyText(keys.join('\n'), t('toast.copied'));
  };

  const search = (event: FormEvent) => {
    event.preventDefault();
    setKeyword(draft);
    setPage(1);
    setSelected([]);
  };

  const confirm = () => {
    const what = confirming;
    setConfirming(null);
    if (!what) return;
    act.mutate(async () => {
      if (what.kind === 'one') {
        await deleteRedemption(what.code.id);
        setSelected((s) => s.filter((id) => id !== what.code.id));
        return t('toast.done');
      }
      const count = await deleteInvalidRedemptions();
      setSelected([]);
      return t('toast.deletedInvalid', { count });
    });
  };

  return (
    <>
      <PageHeader
        title={t('list.title')}
        actions={
          <Button onClick={() => openEditor(null)}>
            <Plus aria-hidden />
            {t('list.add')}
          </Button>
        }
      />
      <form className="data-toolbar" onSubmit={search} role="search">
        <Input
          aria-label={t('list.search.keyword')}
          placeholder={t('list.search.keyword')}
          value={draft}
          onChange={(e) => setDraft(e.target.value)}
        />
        <Button type="submit" variant="secondary">
          <Search aria-hidden />
          {t('list.search.submit')}
        </Button>
        <Button variant="secondary" className="data-toolbar__spacer" onClick={copySelected}>
          <Copy aria-hidden />
          {t('list.copySelected')}
        </Button>
        <Button variant="danger" onClick={() => setConfirming({ kind: 'invalid' })}>
          <Trash2 aria-hidden />
          {t('list.deleteInvalid')}
        </Button>
      </form>
      {codes.isError && !codes.data ? (
        <Alert tone="danger">{t('list.loadFailed')}</Alert>
      ) : !codes.data ? (
        <Spinner label={t('list.loading')} />
      ) : (
        <RedemptionsTable
          codes={codes.data.items}
          selected={selected}
          onSelect={setSelected}
          busy={act.isPending}
          onAction={onAction}
        />
      )}
      <Pager
        page={page}
        pageSize={pageSize}
        total={codes.data?.total ?? 0}
        sizes={pageSizes}
        onPage={(p) => {
          setPage(p);
          setSelected([]);
        }}
        onPageSize={(size) => {
          setPageSize(size as PageSize);
          setPage(1);
        }}
      />
      <RedemptionEditor
        open={editor.open}
        id={editor.id}
        onOpenChange={(open) => (open ? undefined : closeEditor())}
        onSaved={(result) => {
          closeEditor();
          void refresh();
          if (result.codes.length > 0) setCreated(result);
        }}
      />
      <CodesDialog created={created} onClose={() => setCreated(null)} />
      <ConfirmDialog
        open={confirming !== null}
        title={confirming?.kind === 'invalid' ? t('delete.invalidTitle') : t('delete.title')}
        description={
          confirming?.kind === 'one'
            ? t('delete.description', { name: confirming.code.name })
            : t('delete.invalidDescription')
        }
        confirmLabel={t('delete.confirm')}
        onCancel={() => setConfirming(null)}
        onConfirm={confirm}
      />
    </>
  );
}
