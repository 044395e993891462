import { useQuery } from '@tanstack/react-query';
import { Copy, Plus, Search, Trash2 } from 'lucide-react';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';

import {
  CODE_DISABLED,
  CODE_UNUSED,
  deleteInvalidRedemptions,
  deleteRedemption,
  redemptionsQueryOptions,
  setRedemptionStatus,
} from '@/api/redemptions';
import type { Redemption } from '@/api/redemptions';
import { ConfirmDialog, useConfirm } from '@/components/common/confirm-dialog';
import { ListBody } from '@/components/data-table/list-body';
import { Pager } from '@/components/data-table/pager';
import { useEditorDrawer } from '@/components/data-table/use-editor-drawer';
import { useListAction } from '@/components/data-table/use-list-action';
import { useListPage } from '@/components/data-table/use-list-page';
import { PageHeader } from '@/components/layout/page-header';
import { Button } from '@/components/ui/button';
import { Input } from '@/components/ui/input';
import { copyText } from '@/stores/manual-copy';
import { toast } from '@/stores/toasts';

import { CodesDialog } from './codes-dialog';
import { RedemptionEditor } from './redemption-editor';
import { RedemptionsTable } from './redemptions-table';
import type { CodeAction } from './redemptions-table';

import '@/components/data-table/data-table.css';
import './redemptions.css';

/** /redemption (admin, 兑换码管理): search, server paging, create, copy, enable/disable, edit. */
export function RedemptionsPage() {
  const { t } = useTranslation('redemption');
  const list = useListPage({ keyword: '' });
  const editor = useEditorDrawer();
  const confirm = useConfirm();
  const [created, setCreated] = useState<{ name: string; codes: string[] } | null>(null);
  const codes = useQuery(redemptionsQueryOptions(list.params));
  const act = useListAction(['redemptions']);
  const { setSelected } = list;

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
        editor.open(code.id);
        return;
      case 'delete':
        confirm.ask({
          title: t('delete.title'),
          description: t('delete.description', { name: code.name }),
          confirmLabel: t('delete.confirm'),
          onConfirm: () =>
            act.mutate(async () => {
              await deleteRedemption(code.id);
              setSelected((s) => s.filter((id) => id !== code.id));
              return t('toast.done');
            }),
        });
        return;
    }
  };

  const deleteInvalid = () =>
    confirm.ask({
      title: t('delete.invalidTitle'),
      description: t('delete.invalidDescription'),
      confirmLabel: t('delete.confirm'),
      onConfirm: () =>
        act.mutate(async () => {
          const count = await deleteInvalidRedemptions();
          setSelected([]);
          return t('toast.deletedInvalid', { count });
        }),
    });

  const copySelected = () => {
    const keys = (codes.data?.items ?? [])
      .filter((c) => list.selected.includes(c.id))
      .map((c) => c.key);
    if (keys.length === 0) {
      toast.error(t('toast.selectOne'));
      return;
    }
    void copyText(keys.join('\n'), t('toast.copied'));
  };

  return (
    <>
      <PageHeader
        title={t('list.title')}
        actions={
          <Button onClick={() => editor.open(null)}>
            <Plus aria-hidden />
            {t('list.add')}
          </Button>
        }
      />
      <form className="data-toolbar" onSubmit={list.submit} role="search">
        <Input
          aria-label={t('list.search.keyword')}
          placeholder={t('list.search.keyword')}
          value={list.draft.keyword}
          onChange={(e) => list.edit({ keyword: e.target.value })}
        />
        <Button type="submit" variant="secondary">
          <Search aria-hidden />
          {t('list.search.submit')}
        </Button>
        <Button variant="secondary" className="data-toolbar__spacer" onClick={copySelected}>
          <Copy aria-hidden />
          {t('list.copySelected')}
        </Button>
        <Button variant="danger" onClick={deleteInvalid}>
          <Trash2 aria-hidden />
          {t('list.deleteInvalid')}
        </Button>
      </form>
      <ListBody query={codes} loading={t('list.loading')} failed={t('list.loadFailed')}>
        {(data) => (
          <RedemptionsTable
            codes={data.items}
            selected={list.selected}
            onSelect={setSelected}
            busy={act.isPending}
            onAction={onAction}
          />
        )}
      </ListBody>
      <Pager {...list.pager(codes.data?.total ?? 0)} />
      <RedemptionEditor
        open={editor.isOpen}
        id={editor.id}
        onOpenChange={editor.onOpenChange}
        onSaved={(result) => {
          editor.close();
          void act.refresh();
          if (result.codes.length > 0) setCreated(result);
        }}
      />
      <CodesDialog created={created} onClose={() => setCreated(null)} />
      <ConfirmDialog {...confirm.dialog} />
    </>
  );
}
