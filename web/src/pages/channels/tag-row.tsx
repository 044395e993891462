import { useTranslation } from 'react-i18next';

import { CHANNEL_ENABLED } from '@/api/channels';
import type { Channel } from '@/api/channels';
import { Money } from '@/components/common/money';
import { Badge } from '@/components/ui/badge';
import { Button } from '@/components/ui/button';

import { ChannelStatus, NumberCell } from './channel-cells';
import { agreed } from './rows';
import type { ChannelTableHandlers, RowContext } from './rows';

/**
 * The parent row of a tag in tag mode: its groups, summed usage, shared priority and weight
 * (editable for all its channels), and enable/disable/edit for the whole tag.
 */
export function TagRow({
  tag,
  children,
  open,
  onToggle,
  context: { show, selected, onSelect },
  handlers: { busy, onTagStatus, onEditTag, onSetTagNumber },
}: {
  tag: string;
  children: Channel[];
  open: boolean;
  onToggle: () => void;
  context: RowContext;
  handlers: ChannelTableHandlers;
}) {
  const { t } = useTranslation('channels');
  const enabled = children.some((c) => c.status === CHANNEL_ENABLED);
  const ids = children.map((c) => c.id);
  const priority = agreed(children, 'priority');
  const weight = agreed(children, 'weight');
  return (
    <tr aria-label={`tag ${tag}`} data-row="tag" data-state={enabled ? undefined : 'off'}>
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
          <Button size="sm" variant="ghost" onClick={onToggle}>
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
          {[...new Set(children.flatMap((c) => c.group.split(',')))].filter(Boolean).join(', ')}
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
          <Money
            quota={children.reduce((s, c) => s + c.used_quota, 0)}
            label={(quota) => t('quota.used', { quota })}
          />
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
          <Button
            size="sm"
            variant="ghost"
            disabled={busy}
            onClick={() => onTagStatus(tag, !enabled)}
          >
            {enabled ? t('action.disable') : t('action.enable')}
          </Button>
          <Button size="sm" variant="ghost" onClick={() => onEditTag(tag, children)}>
            {t('action.editTag')}
          </Button>
        </div>
      </td>
    </tr>
  );
}
