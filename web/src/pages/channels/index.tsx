import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import {
  ChevronLeft,
  ChevronRight,
  Columns3,
  FlaskConical,
  Plus,
  RefreshCw,
  Search,
  Wallet,
  Wrench,
} from 'lucide-react';
import { useState } from 'react';
import type { FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useMatch, useNavigate } from 'react-router';

import {
  CHANNEL_DISABLED,
  CHANNEL_ENABLED,
  channelsQueryOptions,
  copyChannel,
  deleteChannel,
  deleteChannels,
  deleteDisabledChannels,
  editTag,
  fixAbilities,
  setTagStatus,
  tagChannels,
  testAllChannels,
  updateAllBalances,
  updateBalance,
  updateChannel,
} from '@/api/channels';
import type { Channel, ChannelListQuery, TagEdit } from '@/api/channels';
import { PageHeader } from '@/components/layout/page-header';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Input } from '@/components/ui/input';
import { Select } from '@/components/ui/select';
import { Spinner } from '@/components/ui/spinner';
import { Switch } from '@/components/ui/switch';
import { GroupInput } from '@/pages/users/group-input';
import { pageSizes, usePreferences } from '@/stores/preferences';
import type { PageSize } from '@/stores/preferences';
import { toast } from '@/stores/toasts';

import { ChannelEditorDrawer } from './channel-editor';
import type { EditorTarget } from './channel-editor';
import { ChannelsTable } from './channels-table';
import type { RowAction } from './channels-table';
import { channelColumns, COLUMNS_STORAGE_KEY, ID_SORT_STORAGE_KEY } from './constants';
import type { ChannelColumn } from './constants';
import { BatchTagDialog, ColumnsDialog, ConfirmDialog, TestDialog } from './dialogs';
import { TagEditorDrawer } from './tag-editor';

import './channels.css';

function loadHidden(): ChannelColumn[] {
  try {
    const stored: unknown = JSON.parse(localStorage.getItem(COLUMNS_STORAGE_KEY) ?? '[]');
    return Array.isArray(stored) ? channelColumns.filter((c) => stored.includes(c)) : [];
  } catch {
    return [];
  }
}

/** After "test all", the list refetches every 5 s for a minute. */
const WATCH_INTERVAL_MS = 5_000;
const WATCH_DURATION_MS = 60_000;

type Confirming =
  | { kind: 'one'; channel: Channel }
  | { kind: 'selected'; ids: number[] }
  | { kind: 'disabled' }
  | { kind: 'testAll' };

/** The editor drawer's target from the URL: /channel/add, /channel/edit/{id}, else closed. */
function useEditorTarget(): EditorTarget {
  const adding = useMatch('/channel/add');
  const editing = useMatch('/channel/edit/:id');
  if (adding) return { kind: 'new' };
  if (editing) return { kind: 'edit', id: Number(editing.params.id) };
  return null;
}

/**
 * /channel (admin, 渠道管理): search, server paging, in-place edits, tests, balances, batch
 * operations; /channel/add and /channel/edit/{id} open the editor drawer over the list.
 */
export function ChannelsPage() {
  const { t } = useTranslation('channels');
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const editorTarget = useEditorTarget();
  const pageSize = usePreferences((s) => s.pageSize);
  const setPageSize = usePreferences((s) => s.setPageSize);
  const [filter, setFilter] = useState({ keyword: '', model: '', group: '' });
  const [draft, setDraft] = useState(filter);
  const [page, setPage] = useState(1);
  const [tagMode, setTagMode] = useState(false);
  const [idSort, setIdSortState] = useState(
    () => localStorage.getItem(ID_SORT_STORAGE_KEY) === '1',
  );
  const [hidden, setHiddenState] = useState<ChannelColumn[]>(loadHidden);
  const [selected, setSelected] = useState<number[]>([]);
  const [testing, setTesting] = useState<Channel | null>(null);
  const [confirming, setConfirming] = useState<Confirming | null>(null);
  const [columnsOpen, setColumnsOpen] = useState(false);
  const [tagging, setTagging] = useState(false);
  const [editingTag, setEditingTag] = useState<{ tag: string; children: Channel[] } | null>(null);
  const query: ChannelListQuery = { ...filter, page, pageSize, tagMode, idSort };
  // While a background test of every channel runs, the list refreshes itself to show the results.
  const [watching, setWatching] = useState(false);
  const channels = useQuery({
    ...channelsQueryOptions(query),
    refetchInterval: watching ? WATCH_INTERVAL_MS : false,
  });

  const refresh = () => queryClient.invalidateQueries({ queryKey: ['channels'] });
  const setIdSort = (on: boolean) => {
    setIdSortState(on);
    setPage(1);
    localStorage.setItem(ID_SORT_STORAGE_KEY, on ? '1' : '0');
  };
  const setHidden = (next: ChannelColumn[]) => {
    setHiddenState(next);
    localStorage.setItem(COLUMNS_STORAGE_KEY, JSON.stringify(next));
  };

  const act = useMutation({
    mutationFn: async (run: () => Promise<string>) => run(),
    onSuccess: (text) => {
      if (text) toast.success(text);
      void refresh();
    },
  });
  const copy = useMutation({
    mutationFn: copyChannel,
    meta: { silent: true },
    onSuccess: () => {
      toast.success(t('toast.copied'));
      void refresh();
    },
    onError: () => toast.error(t('toast.copyFailed')),
  });

  const balance = useMutation({
    mutationFn: async (channel: Channel) => updateBalance(channel.id),
    meta: { silent: true },
    onSuccess: (value, channel) => {
      toast.success(t('balance.updated', { name: channel.name, balance: value.toFixed(2) }));
      void refresh();
    },
    onError: (error, channel) =>
      toast.error(t('balance.failed', { name: channel.name, message: error.message })),
  });
  const allBalances = useMutation({
    mutationFn: updateAllBalances,
    meta: { silent: true },
    onSuccess: ({ summary, message }) => {
      if (summary) toast.info(t('balance.allSummary', summary));
      else toast.info(message ? t('toast.notice', { message }) : t('balance.allUpdated'));
      void refresh();
    },
    onError: (error) => toast.error(t('balance.allFailed', { message: error.message })),
  });
  const testAll = useMutation({
    mutationFn: testAllChannels,
    meta: { silent: true },
    onSuccess: (count) => {
      toast.success(t('testAll.started', { count }));
      setWatching(true);
      setTimeout(() => setWatching(false), WATCH_DURATION_MS);
    },
    onError: (error) => toast.error(t('testAll.failed', { message: error.message })),
  });
  const fix = useMutation({
    mutationFn: fixAbilities,
    meta: { silent: true },
    onSuccess: (report) => {
      toast.success(t('fix.done', report));
      void refresh();
    },
    onError: (error) => toast.error(t('fix.failed', { message: error.message })),
  });

  const onAction = (channel: Channel, action: RowAction) => {
    switch (action) {
      case 'test':
        setTesting(channel);
        return;
      case 'enable':
      case 'disable':
        act.mutate(async () => {
          const enable = action === 'enable';
          await updateChannel({
            id: channel.id,
            status: enable ? CHANNEL_ENABLED : CHANNEL_DISABLED,
          });
          return enable ? t('toast.enabled') : t('toast.disabled');
        });
        return;
      case 'copy':
        copy.mutate(channel.id);
        return;
      case 'delete':
        setConfirming({ kind: 'one', channel });
        return;
    }
  };

  const confirm = () => {
    const what = confirming;
    setConfirming(null);
    if (!what) return;
    if (what.kind === 'testAll') {
      testAll.mutate();
      return;
    }
    act.mutate(async () => {
      if (what.kind === 'one') {
        await deleteChannel(what.channel.id);
        setSelected((s) => s.filter((id) => id !== what.channel.id));
        return t('toast.deleted');
      }
      const count =
        what.kind === 'selected' ? await deleteChannels(what.ids) : await deleteDisabledChannels();
      setSelected([]);
      return t('toast.deletedCount', { count });
    });
  };

  const search = (event: FormEvent) => {
    event.preventDefault();
    setFilter(draft);
    setPage(1);
    setSelected([]);
  };

  const total = channels.data?.total ?? 0;
  const pages = Math.max(1, Math.ceil(total / pageSize));

  return (
    <>
      <PageHeader
        title={t('list.title')}
        actions={
          <>
            <Button
              variant="ghost"
              size="icon"
              aria-label={t('list.refresh')}
              title={t('list.refresh')}
              onClick={() => void refresh()}
            >
              <RefreshCw aria-hidden />
            </Button>
            <Button
              variant="secondary"
              disabled={testAll.isPending}
              onClick={() => setConfirming({ kind: 'testAll' })}
            >
              <FlaskConical aria-hidden />
              {t('list.testAll')}
            </Button>
            <Button
              variant="secondary"
              disabled={allBalances.isPending}
              onClick={() => allBalances.mutate()}
            >
              <Wallet aria-hidden />
              {t('list.updateBalances')}
            </Button>
            <Button variant="secondary" disabled={fix.isPending} onClick={() => fix.mutate()}>
              <Wrench aria-hidden />
              {t('list.fix')}
            </Button>
            <Button asChild>
              <Link to="/channel/add">
                <Plus aria-hidden />
                {t('list.add')}
              </Link>
            </Button>
          </>
        }
      />
      <form className="channels__search" onSubmit={search} role="search">
        <Input
          aria-label={t('list.search.keyword')}
          placeholder={t('list.search.keyword')}
          value={draft.keyword}
          onChange={(e) => setDraft({ ...draft, keyword: e.target.value })}
        />
        <Input
          aria-label={t('list.search.model')}
          placeholder={t('list.search.model')}
          value={draft.model}
          onChange={(e) => setDraft({ ...draft, model: e.target.value })}
        />
        <GroupInput
          id="channels-search-group"
          aria-label={t('list.search.group')}
          value={draft.group}
          onChange={(group) => setDraft({ ...draft, group })}
          allowAny
        />
        <Button type="submit" variant="secondary">
          <Search aria-hidden />
          {t('list.search.submit')}
        </Button>
      </form>
      <div className="channels__toolbar">
        <label className="channels__switch">
          <Switch
            checked={tagMode}
            aria-label={t('list.tagMode')}
            onCheckedChange={(on) => {
              setTagMode(on);
              setPage(1);
              setSelected([]);
            }}
          />
          {t('list.tagMode')}
        </label>
        <label className="channels__switch">
          <Switch checked={idSort} aria-label={t('list.idSort')} onCheckedChange={setIdSort} />
          {t('list.idSort')}
        </label>
        <Button variant="secondary" size="sm" onClick={() => setColumnsOpen(true)}>
          <Columns3 aria-hidden />
          {t('list.columns')}
        </Button>
        <span className="channels__selected">
          {t('list.batch.selected', { count: selected.length })}
        </span>
        <Button
          variant="secondary"
          size="sm"
          onClick={() =>
            selected.length === 0
              ? toast.error(t('validation.selectToDelete'))
              : setConfirming({ kind: 'selected', ids: selected })
          }
        >
          {t('list.batch.delete')}
        </Button>
        <Button
          variant="secondary"
          size="sm"
          onClick={() =>
            selected.length === 0 ? toast.error(t('validation.selectToTag')) : setTagging(true)
          }
        >
          {t('list.batch.tag')}
        </Button>
        <Button variant="danger" size="sm" onClick={() => setConfirming({ kind: 'disabled' })}>
          {t('list.batch.deleteDisabled')}
        </Button>
      </div>
      {channels.isError && !channels.data ? (
        <Alert tone="danger">{t('list.loadFailed')}</Alert>
      ) : !channels.data ? (
        <Spinner label={t('list.loading')} />
      ) : (
        <ChannelsTable
          channels={channels.data.items}
          hidden={hidden}
          selected={selected}
          onSelect={setSelected}
          busy={act.isPending}
          onAction={onAction}
          onSetNumber={(channel, field, value) =>
            act.mutate(async () => {
              await updateChannel({ id: channel.id, [field]: value });
              return t('toast.saved');
            })
          }
          tagMode={tagMode}
          onTagStatus={(tag, enabled) =>
            act.mutate(async () => {
              await setTagStatus(tag, enabled);
              return enabled ? t('toast.enabled') : t('toast.disabled');
            })
          }
          onEditTag={(tag, children) => setEditingTag({ tag, children })}
          onSetTagNumber={(tag, field, value) =>
            act.mutate(async () => {
              await editTag({ tag, [field]: value });
              return t('toast.tagUpdated');
            })
          }
          onUpdateBalance={(channel) => balance.mutate(channel)}
          updatingBalance={balance.isPending ? balance.variables.id : undefined}
        />
      )}
      <nav className="channels__pager" aria-label={t('list.pager.label')}>
        <span>{t('list.pager.total', { count: total })}</span>
        <Button
          variant="ghost"
          size="icon"
          aria-label={t('list.pager.previous')}
          disabled={page <= 1}
          onClick={() => setPage(page - 1)}
        >
          <ChevronLeft aria-hidden />
        </Button>
        <span>{t('list.pager.page', { page, pages })}</span>
        <Button
          variant="ghost"
          size="icon"
          aria-label={t('list.pager.next')}
          disabled={page >= pages}
          onClick={() => setPage(page + 1)}
        >
          <ChevronRight aria-hidden />
        </Button>
        <Select
          className="channels__page-size"
          aria-label={t('list.pager.pageSize')}
          value={pageSize}
          onChange={(e) => {
            setPageSize(Number(e.target.value) as PageSize);
            setPage(1);
          }}
        >
          {pageSizes.map((size) => (
            <option key={size} value={size}>
              {t('list.pager.perPage', { size })}
            </option>
          ))}
        </Select>
      </nav>
      <TestDialog
        channel={testing}
        onClose={() => setTesting(null)}
        onTested={() => void refresh()}
      />
      <ConfirmDialog
        open={confirming !== null}
        title={
          confirming?.kind === 'one'
            ? t('delete.title')
            : confirming?.kind === 'selected'
              ? t('delete.batchTitle')
              : confirming?.kind === 'testAll'
                ? t('testAll.title')
                : t('delete.disabledTitle')
        }
        description={
          confirming?.kind === 'one'
            ? t('delete.description', { name: confirming.channel.name })
            : confirming?.kind === 'selected'
              ? t('delete.batchDescription', { count: confirming.ids.length })
              : confirming?.kind === 'testAll'
                ? t('testAll.description')
                : t('delete.disabledDescription')
        }
        confirmLabel={confirming?.kind === 'testAll' ? t('testAll.confirm') : undefined}
        onCancel={() => setConfirming(null)}
        onConfirm={confirm}
      />
      <ColumnsDialog
        open={columnsOpen}
        onOpenChange={setColumnsOpen}
        hidden={hidden}
        onChange={setHidden}
      />
      <BatchTagDialog
        open={tagging}
        ids={selected}
        onOpenChange={setTagging}
        onSubmit={(tag) => {
          setTagging(false);
          act.mutate(async () => {
            await tagChannels(selected, tag);
            setSelected([]);
            return t('toast.tagUpdated');
          });
        }}
      />
      <TagEditorDrawer
        editing={editingTag}
        onClose={() => setEditingTag(null)}
        onSubmit={(edit: TagEdit) => {
          setEditingTag(null);
          act.mutate(async () => {
            await editTag(edit);
            return t('toast.tagUpdated');
          });
        }}
      />
      <ChannelEditorDrawer target={editorTarget} onClose={() => void navigate('/channel')} />
    </>
  );
}
