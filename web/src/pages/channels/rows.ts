import type { Channel } from '@/api/channels';

import type { ChannelColumn } from './constants';

export type RowAction = 'test' | 'enable' | 'disable' | 'copy' | 'delete';
export type NumberField = 'priority' | 'weight';

/** What the rows of the channel table do; the page runs the requests. */
export interface ChannelTableHandlers {
  /** A request is running: the row buttons wait. */
  busy: boolean;
  onAction: (channel: Channel, action: RowAction) => void;
  onSetNumber: (channel: Channel, field: NumberField, value: number) => void;
  /** Asks the provider for the channel's balance (GET /api/channel/update_balance/{id}/). */
  onUpdateBalance: (channel: Channel) => void;
  /** The channel whose balance is being updated. */
  updatingBalance?: number;
  onTagStatus: (tag: string, enabled: boolean) => void;
  onEditTag: (tag: string, children: Channel[]) => void;
  /** Sets the priority or weight of every channel of a tag (PUT /api/channel/tag). */
  onSetTagNumber: (tag: string, field: NumberField, value: number) => void;
}

/** What a row needs to know about the table around it. */
export interface RowContext {
  show: (column: ChannelColumn) => boolean;
  selected: number[];
  onSelect: (ids: number[]) => void;
  tagMode: boolean;
}

export type Row =
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
export function agreed(children: Channel[], field: NumberField): number | undefined {
  const first = children[0]?.[field];
  return children.every((c) => c[field] === first) ? first : undefined;
}
