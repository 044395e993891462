import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';

import { CHANNEL_ENABLED } from '@/api/channels';
import type { Channel } from '@/api/channels';
import { Money } from '@/components/common/money';
import { Button } from '@/components/ui/button';
import { Tooltip } from '@/components/ui/tooltip';
import { formatAmount } from '@/lib/format';

import { ChannelStatus, formatTime, NumberCell, ResponseBadge } from './channel-cells';
import { typeLabel } from './constants';
import type { ChannelTableHandlers, RowContext } from './rows';

/** Used quota, and the provider balance as a button that asks for a fresh one. */
function QuotaCell({
  channel,
  handlers: { busy, onUpdateBalance, updatingBalance },
}: {
  channel: Channel;
  handlers: ChannelTableHandlers;
}) {
  const { t } = useTranslation('channels');
  return (
    <div className="channels__quota">
      <Money quota={channel.used_quota} label={(quota) => t('quota.used', { quota })} />
      <Tooltip
        side="top"
        content={
          channel.balance_updated_time > 0
            ? t('balance.clickToUpdateSince', { time: formatTime(channel.balance_updated_time) })
            : t('balance.clickToUpdate')
        }
      >
        <button
          type="button"
          className="channels__balance"
          aria-label={t('balance.update', { name: channel.name })}
          disabled={busy || updatingBalance === channel.id}
          onClick={() => onUpdateBalance(channel)}
        >
          {t('quota.balance', { balance: formatAmount(channel.balance) })}
        </button>
      </Tooltip>
    </div>
  );
}

/** One channel: its columns, in-place priority and weight, and its actions. */
export function ChannelRow({
  channel,
  child,
  context: { show, selected, onSelect, tagMode },
  handlers,
}: {
  channel: Channel;
  /** Shown under its tag's row in tag mode. */
  child: boolean;
  context: RowContext;
  handlers: ChannelTableHandlers;
}) {
  const { t } = useTranslation('channels');
  const { busy, onAction, onSetNumber } = handlers;
  const enabled = channel.status === CHANNEL_ENABLED;
  const action = (name: Parameters<typeof onAction>[1], label: string, danger = false) => (
    <Button
      size="sm"
      variant={danger ? 'danger' : 'ghost'}
      disabled={busy}
      onClick={() => onAction(channel, name)}
    >
      {label}
    </Button>
  );
  return (
    <tr
      aria-label={channel.name}
      data-state={enabled ? undefined : 'off'}
      data-row={child ? 'child' : undefined}
    >
      <td>
        <input
          type="checkbox"
          aria-label={t('action.select', { name: channel.name })}
          checked={selected.includes(channel.id)}
          onChange={(e) =>
            onSelect(
              e.target.checked
                ? [...selected, channel.id]
                : selected.filter((id) => id !== channel.id),
            )
          }
        />
      </td>
      {show('id') ? <td>{channel.id}</td> : null}
      {show('name') ? (
        <td>
          <div className="channels__name">
            <span>{channel.name}</span>
            {channel.tag && !tagMode ? <small>{channel.tag}</small> : null}
          </div>
        </td>
      ) : null}
      {show('group') ? <td>{channel.group.split(',').filter(Boolean).join(', ')}</td> : null}
      {show('type') ? <td>{typeLabel(t, channel.type)}</td> : null}
      {show('status') ? (
        <td>
          <ChannelStatus channel={channel} />
        </td>
      ) : null}
      {show('responseTime') ? (
        <td>
          <ResponseBadge ms={channel.response_time} />
        </td>
      ) : null}
      {show('balance') ? (
        <td>
          <QuotaCell channel={channel} handlers={handlers} />
        </td>
      ) : null}
      {show('priority') ? (
        <td>
          <NumberCell
            key={`p${channel.priority}`}
            field="priority"
            label={t('inline.priority', { name: channel.name })}
            value={channel.priority}
            disabled={busy}
            onSave={(v) => onSetNumber(channel, 'priority', v)}
          />
        </td>
      ) : null}
      {show('weight') ? (
        <td>
          <NumberCell
            key={`w${channel.weight}`}
            field="weight"
            label={t('inline.weight', { name: channel.name })}
            value={channel.weight}
            disabled={busy}
            onSave={(v) => onSetNumber(channel, 'weight', v)}
          />
        </td>
      ) : null}
      <td>
        <div className="channels__actions">
          {action('test', t('action.test'))}
          {enabled ? action('disable', t('action.disable')) : action('enable', t('action.enable'))}
          <Button size="sm" variant="ghost" asChild>
            <Link to={`/channel/edit/${channel.id}`}>{t('action.edit')}</Link>
          </Button>
          {action('copy', t('action.copy'))}
          {action('delete', t('action.delete'), true)}
        </div>
      </td>
    </tr>
  );
}
