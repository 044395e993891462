import { useState } from 'react';
import { useTranslation } from 'react-i18next';

import type { Channel } from '@/api/channels';
import { useSelection } from '@/components/data-table/pager';
import { Table } from '@/components/ui/table';

import { ChannelRow } from './channel-row';
import { channelColumns } from './constants';
import type { ChannelColumn } from './constants';
import { groupRows } from './rows';
import type { ChannelTableHandlers } from './rows';
import { TagRow } from './tag-row';

export interface ChannelsTableProps {
  channels: Channel[];
  show: (column: ChannelColumn) => boolean;
  selected: number[];
  onSelect: (ids: number[]) => void;
  /** Tag aggregation: channels with a tag are grouped under a parent row. */
  tagMode: boolean;
  handlers: ChannelTableHandlers;
}

/** The channel list (spec 02 §2); in tag mode each tag's row can fold its channels away. */
export function ChannelsTable({
  channels,
  show,
  selected,
  onSelect,
  tagMode,
  handlers,
}: ChannelsTableProps) {
  const { t } = useTranslation('channels');
  const [collapsed, setCollapsed] = useState<string[]>([]);
  const selection = useSelection(channels, selected, onSelect);
  const shown = channelColumns.filter(show);
  const context = { show, selected, onSelect, tagMode };

  return (
    <Table className="channels__table">
      <thead>
        <tr>
          <th>
            <input
              type="checkbox"
              aria-label={t('action.selectAll')}
              checked={selection.all}
              onChange={(e) => selection.toggleAll(e.target.checked)}
            />
          </th>
          {shown.map((column) => (
            <th key={column}>{t(`column.${column}`)}</th>
          ))}
          <th>{t('column.actions')}</th>
        </tr>
      </thead>
      <tbody>
        {channels.length === 0 ? (
          <tr>
            <td colSpan={shown.length + 2}>{t('list.empty')}</td>
          </tr>
        ) : null}
        {groupRows(channels, tagMode).map((row) => {
          if (row.kind === 'tag') {
            const open = !collapsed.includes(row.tag);
            return (
              <TagRow
                key={`tag:${row.tag}`}
                tag={row.tag}
                children={row.children}
                open={open}
                onToggle={() =>
                  setCollapsed(
                    open ? [...collapsed, row.tag] : collapsed.filter((x) => x !== row.tag),
                  )
                }
                context={context}
                handlers={handlers}
              />
            );
          }
          if (row.child && collapsed.includes(row.channel.tag)) return null;
          return (
            <ChannelRow
              key={row.channel.id}
              channel={row.channel}
              child={row.child}
              context={context}
              handlers={handlers}
            />
          );
        })}
      </tbody>
    </Table>
  );
}
