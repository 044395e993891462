import { useState } from 'react';
import type { KeyboardEvent } from 'react';
import { useTranslation } from 'react-i18next';

import { disabledKeys, statusInfo } from '@/api/channels';
import type { Channel } from '@/api/channels';
import { Badge } from '@/components/ui/badge';
import type { BadgeProps } from '@/components/ui/badge';
import { Input } from '@/components/ui/input';
import { Tooltip } from '@/components/ui/tooltip';
import { formatAmount } from '@/lib/format';
import { toast } from '@/stores/toasts';

import { responseTone } from './constants';
import type { ResponseTone } from './constants';
import { prioritySchema, weightSchema } from './schema';

const toneOf: Record<ResponseTone, BadgeProps['tone']> = {
  untested: 'neutral',
  green: 'green',
  lime: 'lime',
  yellow: 'yellow',
  red: 'red',
};

export function formatTime(seconds: number): string {
  return seconds > 0 ? new Date(seconds * 1000).toLocaleString() : '';
}

/** The status badge; auto-disabled channels and disabled keys explain why in a tooltip. */
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

/** The last test's response time, coloured by speed (spec 02 §4). */
export function ResponseBadge({ ms }: { ms: number }) {
  const { t } = useTranslation('channels');
  const tone = responseTone(ms);
  return (
    <Badge tone={toneOf[tone]} data-response={tone}>
      {tone === 'untested'
        ? t('responseTime.untested')
        : t('responseTime.seconds', { seconds: formatAmount(ms / 1000) })}
    </Badge>
  );
}

/**
 * An integer edited in place: saved on Enter or blur when it changed and is valid. `undefined`
 * (a tag whose channels disagree) shows an empty field.
 */
export function NumberCell({
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
