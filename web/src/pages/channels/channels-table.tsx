import { useState } from 'react';
import type { KeyboardEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';

import { CHANNEL_ENABLED, disabledKeys, statusInfo } from '@/api/channels';
import type { Channel } from '@/api/channels';
import { Badge } from '@/components/ui/badge';
import type { BadgeProps } from '@/components/ui/badge';
import { Button } from '@/components/ui/button';
import { Input } from '@/components/ui/input';
import { Table } from '@/components/ui/table';
import { Tooltip } from '@/components/ui/tooltip';
import { useFormatQuota } from '@/lib/use-format-quota';
import { toast } from '@/stores/toasts';

import { responseTone, typeLabel } from './constants';
import type { ChannelColumn, ResponseTone } from './constants';
import { prioritySchema, weightSchema } from './schema';

export type RowAction = 'test' | 'enable' | 'disable' | 'copy' | 'delete';

export interface ChannelsTableProps {
  channels: Channel[];
  hidden: ChannelColumn[];
  selected: number[];
  onSelect: (ids: number[]) => void;
  busy: boolean;
  onAction: (channel: Channel, action: RowAction) => void;
  onSetNumber: (channel: Channel, field: 'priority' | 'weight', value: number) => void;
  /** Tag aggregation: channels with a tag are grouped under a parent row. */
  tagMode: boolean;
  onTagStatus: (tag: string, enabled: boolean) => void;
  onEditTag: (tag: string, children: Channel[]) => void;
  /** Sets the priority or weight of every channel of a tag (PUT /api/channel/tag). */
  onSetTagNumber: (tag: string, field: 'priority' | 'weight', value: number) => void;
  /** Asks the provider for the channel's balance (GET /api/channel/update_balance/{id}/). */
  onUpdateBalance: (channel: Channel) => void;
  /** The channel whose balance is being updated. */
  updatingBalance?: number;
}

const toneOf: Record<ResponseTone, BadgeProps['tone']> = {
  untested: 'neutral',
  green: 'green',
  lime: 'lime',
  yellow: 'yellow',
  red: 'red',
};

function formatTime(seconds: number): string {
  return seconds > 0 ? new Date(seconds * 1000).toLocaleString() : '';
}

export function ChannelStatus({
  channel,
}: {
  channel: Pick<Channel, 'status' | 'other_info'> & { key_count?: number };
}) {
  const { t } = useTranslation('channels');
  const label =
    channel.status === 1 || channel.status === 2 || channel.status === 3
      ? t(`status.${channel.status}`)
      : t('status.unknown');
  const tone: BadgeProps['tone'] =
    channel.status === 1 ? 'green' : channel.status === 2 ? 'red' : 'orange';
  const keys = disabledKeys(channel);
  const autoDisabled = channel.status === 3;
  if (!autoDisabled && keys.length === 0) return <Badge tone={tone}>{label}</Badge>;
  const info = statusInfo(channel);
  const keyCount = channel.key_count ?? 0;
  return (
    <Tooltip
      side="top"
      content={
        <span className="channels__status-tip">
          {autoDisabled ? (
            <>
              <span>{t('status.reason', { reason: info.reason })}</span>
              <span>{t('status.time', { time: formatTime(info.time) })}</span>
            </>
          ) : null}
          {keys.length > 0 ? (
            <>
              <strong>
                {keyCount > 0
                  ? t('status.keysDisabled', { count: keys.length, total: keyCount })
                  : t('status.keysDisabledCount', { count: keys.length })}
              </strong>
              {keys.map((key) => (
                <span key={key.index}>
                  {t('status.keyLine', {
                    line: key.index + 1,
                    reason: key.reason,
                    time: formatTime(key.time),
                  })}
                </span>
              ))}
            </>
          ) : null}
        </span>
      }
    >
      <span className="channels__status" tabIndex={0}>
        <Badge tone={tone}>{label}</Badge>
        {keys.length > 0 ? (
          <Badge tone="orange" data-keys-disabled={keys.length}>
            {keyCount > 0
              ? t('status.keysBadge', { count: keys.length, total: keyCount })
              : t('status.keysBadgeCount', { count: keys.length })}
          </Badge>
        ) : null}
      </span>
    </Tooltip>
  );
}

export function ResponseBadge({ ms }: { ms: number }) {
  const { t } = useTranslation('channels');
  const tone = responseTone(ms);
  return (
    <Badge tone={toneOf[tone]} data-response={tone}>
      {tone === 'untested'
        ? t('responseTime.untested')
        : t('responseTime.seconds', { seconds: (ms / 1000).toFixed(2) })}
    </Badge>
  );
}

/**
 * An integer edited in place: saved on Enter or blur when it changed and is valid. `undefined`
 * (a tag whose channels disagree) shows an empty field.
 */
function NumberCell({
  value,
  label,
  field,
  disabled,
  onSave,
}: {
  value: number | undefined;
  label: string;
  field: 'priority' | 'weight';
  disabled?: boolean;
  onSave: (value: number) => void;
}) {
  const { t } = useTranslation('channels');
  const [draft, setDraft] = useState<string | null>(null);
  const commit = () => {
    if (draft === null) return;
    setDraft(null);
    if (draft.trim() === '' || Number(draft) === value) return;
    const parsed = (field === 'priority' ? prioritySchema : weightSchema).safeParse(Number(draft));
    if (!parsed.success) {
      toast.error(
        t((parsed.error.issues[0]?.message ?? 'validation.integer') as 'validation.integer'),
      );
      return;
    }
    onSave(parsed.data);
  };
  return (
    <Input
      className="channels__number"
      type="number"
      aria-label={label}
      disabled={disabled}
      value={draft ?? (value === undefined ? '' : String(value))}
      placeholder={value === undefined ? t('tag.mixed') : undefined}
      onChange={(e) => setDraft(e.target.value)}
      onBlur={commit}
      onKeyDown={(e: KeyboardEvent<HTMLInputElement>) => {
        if (e.key === 'Enter') commit();
        if (e.key === 'Escape') setDraft(null);
      }}
    />
  );
}

type Row =
  | { kind: 'channel'; channel: Channel; child: boolean }
  | { kind: 'tag'; tag: string; children: Channel[] };

/** In tag mode, tagged channels follow a parent row of their tag (in list order). */
export function groupRows(channels: Channel[], tagMode: boolean): Row[] {
  if (!tagMode) return channels.map((channel) => ({ kind: 'channel', channel, child: false }));
  const rows: Row[] = [];
  const seen = new Set<string>();
  for (const channel of channels) {
    if (channel.tag === '') {
      rows.push({ kind: 'channel', channel, child: false });
      continue;
    }
    if (seen.has(channel.tag)) continue;
    seen.add(channel.tag);
    const children = channels.filter((c) => c.tag === channel.tag);
    rows.push({ kind: 'tag', tag: channel.tag, children });
    for (const child of children) rows.push({ kind: 'channel', channel: child, child: true });
  }
  return rows;
}

/** The value every child shares, or undefined when they differ (spec 02 §4). */
export function agreed(children: Channel[], field: 'priority' | 'weight'): number | undefined {
  const first = children[0]?.[field];
  return children.every((c) => c[field] === first) ? first : undefined;
}

export function ChannelsTable({
  channels,
  hidden,
  selected,
  onSelect,
  busy,
  onAction,
  onSetNumber,
  tagMode,
  onTagStatus,
  onEditTag,
  onSetTagNumber,
  onUpdateBalance,
  updatingBalance,
}: ChannelsTableProps) {
  const { t } = useTranslation('channels');
  const formatQuota = useFormatQuota();
  const [collapsed, setCollapsed] = useState<string[]>([]);
  const show = (column: ChannelColumn) => !hidden.includes(column);
  const allIds = channels.map((c) => c.id);
  const allSelected = allIds.length > 0 && allIds.every((id) => selected.includes(id));
  const columnCount = 2 + 9 - hidden.length;
  const rows = groupRows(channels, tagMode);

  return (
    <Table className="channels__table">
      <thead>
        <tr>
          <th>
            <input
              type="checkbox"
              aria-label={t('action.selectAll')}
              checked={allSelected}
              onChange={(e) => onSelect(e.target.checked ? allIds : [])}
            />
          </th>
          {show('id') ? <th>{t('column.id')}</th> : null}
          {show('name') ? <th>{t('column.name')}</th> : null}
          {show('group') ? <th>{t('column.group')}</th> : null}
          {show('type') ? <th>{t('column.type')}</th> : null}
          {show('status') ? <th>{t('column.status')}</th> : null}
          {show('responseTime') ? <th>{t('column.responseTime')}</th> : null}
          {show('balance') ? <th>{t('column.balance')}</th> : null}
          {show('priority') ? <th>{t('column.priority')}</th> : null}
          {show('weight') ? <th>{t('column.weight')}</th> : null}
          <th>{t('column.actions')}</th>
        </tr>
      </thead>
      <tbody>
        {channels.length === 0 ? (
          <tr>
            <td colSpan={columnCount}>{t('list.empty')}</td>
          </tr>
        ) : null}
        {rows.map((row) => {
          if (row.kind === 'tag') {
            const { tag, children } = row;
            const enabled = children.some((c) => c.status === CHANNEL_ENABLED);
            const open = !collapsed.includes(tag);
            const ids = children.map((c) => c.id);
            const priority = agreed(children, 'priority');
            const weight = agreed(children, 'weight');
            return (
              <tr
                key={`tag:${tag}`}
                aria-label={`tag ${tag}`}
                data-row="tag"
                data-state={enabled ? undefined : 'off'}
              >
                <td>
                  <input
                    type="checkbox"
                    aria-label={t('action.select', { name: tag })}
                    checked={ids.every((id) => selected.includes(id))}
                    onChange={(e) =>
                      onSelect(
                        e.target.checked
                          ? [...new Set([...selected, ...ids])]
                          : selected.filter((id) => !ids.includes(id)),
                      )
                    }
                  />
                </td>
                {show('id') ? (
                  <td>
                    <Button
                      size="sm"
                      variant="ghost"
                      onClick={() =>
                        setCollapsed(
                          open ? [...collapsed, tag] : collapsed.filter((x) => x !== tag),
                        )
                      }
                    >
                      {open ? t('action.collapse') : t('action.expand')}
                    </Button>
                  </td>
                ) : null}
                {show('name') ? (
                  <td>
                    <div className="channels__name">
                      <Badge tone="purple">{tag}</Badge>
                      <small>{t('tag.channels', { count: children.length })}</small>
                    </div>
                  </td>
                ) : null}
                {show('group') ? (
                  <td>
                    {[...new Set(children.flatMap((c) => c.group.split(',')))]
                      .filter(Boolean)
                      .join(', ')}
                  </td>
                ) : null}
                {show('type') ? <td /> : null}
                {show('status') ? (
                  <td>
                    <ChannelStatus channel={{ status: enabled ? 1 : 2, other_info: '' }} />
                  </td>
                ) : null}
                {show('responseTime') ? <td /> : null}
                {show('balance') ? (
                  <td>
                    {t('quota.used', {
                      quota: formatQuota(children.reduce((s, c) => s + c.used_quota, 0)),
                    })}
                  </td>
                ) : null}
                {show('priority') ? (
                  <td>
                    <NumberCell
                      key={`p${priority}`}
                      field="priority"
                      label={t('inline.tagPriority', { tag })}
                      value={priority}
                      disabled={busy}
                      onSave={(v) => onSetTagNumber(tag, 'priority', v)}
                    />
                  </td>
                ) : null}
                {show('weight') ? (
                  <td>
                    <NumberCell
                      key={`w${weight}`}
                      field="weight"
                      label={t('inline.tagWeight', { tag })}
                      value={weight}
                      disabled={busy}
                      onSave={(v) => onSetTagNumber(tag, 'weight', v)}
                    />
                  </td>
                ) : null}
                <td>
                  <div className="channels__actions">
                    {enabled ? (
                      <Button
                        size="sm"
                        variant="ghost"
                        disabled={busy}
                        onClick={() => onTagStatus(tag, false)}
                      >
                        {t('action.disable')}
                      </Button>
                    ) : (
                      <Button
                        size="sm"
                        variant="ghost"
                        disabled={busy}
                        onClick={() => onTagStatus(tag, true)}
                      >
                        {t('action.enable')}
                      </Button>
                    )}
                    <Button size="sm" variant="ghost" onClick={() => onEditTag(tag, children)}>
                      {t('action.editTag')}
                    </Button>
                  </div>
                </td>
              </tr>
            );
          }
          const { channel, child } = row;
          if (child && collapsed.includes(channel.tag)) return null;
          const enabled = channel.status === CHANNEL_ENABLED;
          return (
            <tr
              key={channel.id}
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
              {show('group') ? (
                <td>{channel.group.split(',').filter(Boolean).join(', ')}</td>
              ) : null}
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
                  <div className="channels__quota">
                    <span>{t('quota.used', { quota: formatQuota(channel.used_quota) })}</span>
                    <Tooltip
                      side="top"
                      content={
                        channel.balance_updated_time > 0
                          ? t('balance.clickToUpdateSince', {
                              time: formatTime(channel.balance_updated_time),
                            })
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
                        {t('quota.balance', { balance: channel.balance.toFixed(2) })}
                      </button>
                    </Tooltip>
                  </div>
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
                  <Button
                    size="sm"
                    variant="ghost"
                    disabled={busy}
                    onClick={() => onAction(channel, 'test')}
                  >
                    {t('action.test')}
                  </Button>
                  {enabled ? (
                    <Button
                      size="sm"
                      variant="ghost"
                      disabled={busy}
                      onClick={() => onAction(channel, 'disable')}
                    >
                      {t('action.disable')}
                    </Button>
                  ) : (
                    <Button
                      size="sm"
                      variant="ghost"
                      disabled={busy}
                      onClick={() => onAction(channel, 'enable')}
                    >
                      {t('action.enable')}
                    </Button>
                  )}
                  <Button size="sm" variant="ghost" asChild>
                    <Link to={`/channel/edit/${channel.id}`}>{t('action.edit')}</Link>
                  </Button>
                  <Button
                    size="sm"
                    variant="ghost"
                    disabled={busy}
                    onClick={() => onAction(channel, 'copy')}
                  >
                    {t('action.copy')}
                  </Button>
                  <Button
                    size="sm"
                    variant="danger"
                    disabled={busy}
                    onClick={() => onAction(channel, 'delete')}
                  >
                    {t('action.delete')}
                  </Button>
                </div>
              </td>
            </tr>
          );
        })}
      </tbody>
    </Table>
  );
}
