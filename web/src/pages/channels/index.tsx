import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useMatch, useNavigate } from 'react-router';

import { channelsQueryOptions, editTag, tagChannels } from '@/api/channels';
import type { Channel } from '@/api/channels';
import { ConfirmDialog, useConfirm } from '@/components/common/confirm-dialog';
import { ColumnsDialog } from '@/components/data-table/columns-dialog';
import { ListBody } from '@/components/data-table/list-body';
import { Pager } from '@/components/data-table/pager';
import { useListPage } from '@/components/data-table/use-list-page';
import { PageHeader } from '@/components/layout/page-header';
import { useColumns } from '@/stores/columns';
import { toast } from '@/stores/toasts';

import { ChannelEditorDrawer } from './channel-editor';
import type { EditorTarget } from './channel-editor';
import { ChannelsHeaderActions } from './channels-header';
import { ChannelsTable } from './channels-table';
import { ChannelSearchForm, ChannelsToolbar } from './channels-toolbar';
import { channelColumns, ID_SORT_STORAGE_KEY } from './constants';
import { BatchTagDialog, TestDialog } from './dialogs';
import { TagEditorDrawer } from './tag-editor';
import { useChannelActions } from './use-channel-actions';

import '@/components/data-table/data-table.css';
import './channels.css';

/** After "test all", the list refetches every 5 s for a minute. */
const WATCH_INTERVAL_MS = 5_000;
const WATCH_DURATION_MS = 60_000;

const channelColumnSpec = {
  table: 'channels',
  columns: channelColumns,
  defaults: Object.fromEntries(channelColumns.map((c) => [c, true])) as Record<
    (typeof channelColumns)[number],
    boolean
  >,
} as const;

/** The editor drawer's target from the URL: /channel/add, /channel/edit/{id}, else closed. */
function useEditorTarget(): EditorTarget {
  const adding = useMatch('/channel/add');
  const editing = useMatch('/channel/edit/:id');
  if (adding) return { kind: 'new' };
  if (editing) return { kind: 'edit', id: Number(editing.params.id) };
  return null;
}

/** The id-sort switch, kept locally ("1" = newest id first). */
function useIdSort() {
  const [idSort, setIdSort] = useState(() => localStorage.getItem(ID_SORT_STORAGE_KEY) === '1');
  return [
    idSort,
    (on: boolean) => {
      setIdSort(on);
      localStorage.setItem(ID_SORT_STORAGE_KEY, on ? '1' : '0');
    },
  ] as const;
}

/**
 * /channel (admin, 渠道管理): search, server paging, in-place edits, tests, balances, batch
 * operations; /channel/add and /channel/edit/{id} open the editor drawer over the list.
 */
export function ChannelsPage() {
  const { t } = useTranslation('channels');
  const navigate = useNavigate();
  const editorTarget = useEditorTarget();
  const list = useListPage({ keyword: '', model: '', group: '' });
  const columns = useColumns(channelColumnSpec);
  const confirm = useConfirm();
  const [tagMode, setTagMode] = useState(false);
  const [idSort, setIdSort] = useIdSort();
  const [dialog, setDialog] = useState<'columns' | 'tag' | null>(null);
  const [testing, setTesting] = useState<Channel | null>(null);
  const [editingTag, setEditingTag] = useState<{ tag: string; children: Channel[] } | null>(null);
  // While a background test of every channel runs, the list refreshes itself to show the results.
  const [watching, setWatching] = useState(false);
  const channels = useQuery({
    ...channelsQueryOptions({ ...list.params, tagMode, idSort }),
    refetchInterval: watching ? WATCH_INTERVAL_MS : false,
  });
  const { setSelected } = list;
  const actions = useChannelActions({
    ask: confirm.ask,
    onTest: setTesting,
    onEditTag: (tag, children) => setEditingTag({ tag, children }),
    onDeleted: (ids) =>
      setSelected((s) => (ids === 'all' ? [] : s.filter((id) => !ids.includes(id)))),
    onWatch: () => {
      setWatching(true);
      setTimeout(() => setWatching(false), WATCH_DURATION_MS);
    },
  });

  return (
    <>
      <PageHeader
        title={t('list.title')}
        actions={
          <ChannelsHeaderActions
            onRefresh={() => void actions.refresh()}
            testAll={actions.testAll}
            allBalances={actions.allBalances}
            fix={actions.fix}
          />
        }
      />
      <ChannelSearchForm draft={list.draft} onEdit={list.edit} onSubmit={list.submit} />
      <ChannelsToolbar
        tagMode={tagMode}
        onTagMode={(on) => {
          setTagMode(on);
          list.restart();
        }}
        idSort={idSort}
        onIdSort={(on) => {
          setIdSort(on);
          list.restart();
        }}
        onColumns={() => setDialog('columns')}
        selectedCount={list.selected.length}
        onDeleteSelected={() => actions.deleteSelected(list.selected)}
        onTagSelected={() =>
          list.selected.length === 0 ? toast.error(t('validation.selectToTag')) : setDialog('tag')
        }
        onDeleteDisabled={actions.deleteDisabled}
      />
      <ListBody query={channels} loading={t('list.loading')} failed={t('list.loadFailed')}>
        {(data) => (
          <ChannelsTable
            channels={data.items}
            show={columns.show}
            selected={list.selected}
            onSelect={setSelected}
            tagMode={tagMode}
            handlers={actions.handlers}
          />
        )}
      </ListBody>
      <Pager {...list.pager(channels.data?.total ?? 0)} />
      <TestDialog
        channel={testing}
        onClose={() => setTesting(null)}
        onTested={() => {
          setTesting(null);
          void actions.refresh();
        }}
      />
      <ConfirmDialog {...confirm.dialog} />
      <ColumnsDialog
        open={dialog === 'columns'}
        onOpenChange={(open) => setDialog(open ? 'columns' : null)}
        columns={channelColumns}
        visible={columns.visible}
        onChange={columns.set}
        onReset={columns.reset}
        label={(column) => t(`column.${column}`)}
      />
      <BatchTagDialog
        open={dialog === 'tag'}
        ids={list.selected}
        onOpenChange={(open) => setDialog(open ? 'tag' : null)}
        onSubmit={(tag) => {
          setDialog(null);
          const ids = list.selected;
          actions.act.mutate(async () => {
            await tagChannels(ids, tag);
            setSelected([]);
            return t('toast.tagUpdated');
          });
        }}
      />
      <TagEditorDrawer
        editing={editingTag}
        onClose={() => setEditingTag(null)}
        onSubmit={(edit) => {
          setEditingTag(null);
          actions.act.mutate(async () => {
            await editTag(edit);
            return t('toast.tagUpdated');
          });
        }}
      />
      <ChannelEditorDrawer target={editorTarget} onClose={() => void navigate('/channel')} />
    </>
  );
}
