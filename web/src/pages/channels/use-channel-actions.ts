import { useMutation } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';

import {
  CHANNEL_DISABLED,
  CHANNEL_ENABLED,
  copyChannel,
  deleteChannel,
  deleteChannels,
  deleteDisabledChannels,
  editTag,
  fixAbilities,
  setTagStatus,
  testAllChannels,
  updateAllBalances,
  updateBalance,
  updateChannel,
} from '@/api/channels';
import type { Channel } from '@/api/channels';
import { localizedMessage } from '@/api/errors';
import type { Confirmation } from '@/components/common/confirm-dialog';
import { useListAction } from '@/components/data-table/use-list-action';
import { formatAmount } from '@/lib/format';
import { toast } from '@/stores/toasts';

import type { ChannelTableHandlers, RowAction } from './rows';

/**
 * The channel page's requests and their notices. `ask` shows a confirmation first (deletions,
 * the test of every channel); `onTest` opens the test dialog for a row; `onEditTag` the tag
 * drawer; `onDeleted` drops deleted ids from the selection; `onWatch` starts the list's
 * self-refresh after a background test of every channel.
 */
export function useChannelActions({
  ask,
  onTest,
  onEditTag,
  onDeleted,
  onWatch,
}: {
  ask: (confirmation: Confirmation) => void;
  onTest: (channel: Channel) => void;
  onEditTag: (tag: string, children: Channel[]) => void;
  onDeleted: (ids: number[] | 'all') => void;
  onWatch: () => void;
}) {
  const { t } = useTranslation('channels');
  const act = useListAction(['channels']);
  const { refresh } = act;
  const silent = { meta: { silent: true } };

  const copy = useMutation({
    mutationFn: copyChannel,
    ...silent,
    onSuccess: () => {
      toast.success(t('toast.copied'));
      void refresh();
    },
    onError: () => toast.error(t('toast.copyFailed')),
  });
  const balance = useMutation({
    mutationFn: async (channel: Channel) => updateBalance(channel.id),
    ...silent,
    onSuccess: (value, channel) => {
      toast.success(t('balance.updated', { name: channel.name, balance: formatAmount(value) }));
      void refresh();
    },
    onError: (error, channel) =>
      toast.error(t('balance.failed', { name: channel.name, message: localizedMessage(error) })),
  });
  const allBalances = useMutation({
    mutationFn: updateAllBalances,
    ...silent,
    onSuccess: ({ summary, message }) => {
      if (summary) toast.info(t('balance.allSummary', summary));
      else toast.info(message ? t('toast.notice', { message }) : t('balance.allUpdated'));
      void refresh();
    },
    onError: (error) => toast.error(t('balance.allFailed', { message: localizedMessage(error) })),
  });
  const testAll = useMutation({
    mutationFn: testAllChannels,
    ...silent,
    onSuccess: (count) => {
      toast.success(t('testAll.started', { count }));
      onWatch();
    },
    onError: (error) => toast.error(t('testAll.failed', { message: localizedMessage(error) })),
  });
  const fix = useMutation({
    mutationFn: fixAbilities,
    ...silent,
    onSuccess: (report) => {
      toast.success(t('fix.done', report));
      void refresh();
    },
    onError: (error) => toast.error(t('fix.failed', { message: localizedMessage(error) })),
  });

  const onAction = (channel: Channel, action: RowAction) => {
    switch (action) {
      case 'test':
        onTest(channel);
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
        ask({
          title: t('delete.title'),
          description: t('delete.description', { name: channel.name }),
          confirmLabel: t('delete.confirm'),
          onConfirm: () =>
            act.mutate(async () => {
              await deleteChannel(channel.id);
              onDeleted([channel.id]);
              return t('toast.deleted');
            }),
        });
        return;
    }
  };

  const handlers: ChannelTableHandlers = {
    busy: act.isPending,
    onAction,
    onSetNumber: (channel, field, value) =>
      act.mutate(async () => {
        await updateChannel({ id: channel.id, [field]: value });
        return t('toast.saved');
      }),
    onUpdateBalance: (channel) => balance.mutate(channel),
    updatingBalance: balance.isPending ? balance.variables.id : undefined,
    onTagStatus: (tag, enabled) =>
      act.mutate(async () => {
        await setTagStatus(tag, enabled);
        return enabled ? t('toast.enabled') : t('toast.disabled');
      }),
    onEditTag,
    onSetTagNumber: (tag, field, value) =>
      act.mutate(async () => {
        await editTag({ tag, [field]: value });
        return t('toast.tagUpdated');
      }),
  };

  return {
    act,
    handlers,
    refresh,
    deleteSelected: (ids: number[]) =>
      ids.length === 0
        ? toast.error(t('validation.selectToDelete'))
        : ask({
            title: t('delete.batchTitle'),
            description: t('delete.batchDescription', { count: ids.length }),
            confirmLabel: t('delete.confirm'),
            onConfirm: () =>
              act.mutate(async () => {
                const count = await deleteChannels(ids);
                onDeleted('all');
                return t('toast.deletedCount', { count });
              }),
          }),
    deleteDisabled: () =>
      ask({
        title: t('delete.disabledTitle'),
        description: t('delete.disabledDescription'),
        confirmLabel: t('delete.confirm'),
        onConfirm: () =>
          act.mutate(async () => {
            const count = await deleteDisabledChannels();
            onDeleted('all');
            return t('toast.deletedCount', { count });
          }),
      }),
    testAll: {
      pending: testAll.isPending,
      run: () =>
        ask({
          title: t('testAll.title'),
          description: t('testAll.description'),
          confirmLabel: t('testAll.confirm'),
          danger: false,
          onConfirm: () => testAll.mutate(),
        }),
    },
    allBalances: { pending: allBalances.isPending, run: () => allBalances.mutate() },
    fix: { pending: fix.isPending, run: () => fix.mutate() },
  };
}
