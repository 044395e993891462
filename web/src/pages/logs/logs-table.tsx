import { ChevronDown, ChevronRight } from 'lucide-react';
import { Fragment, useState } from 'react';
import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';

import { isRequestType, logTypes, parseLogOther } from '@/api/logs';
import type { LogEntry, LogOther } from '@/api/logs';
import { Money } from '@/components/common/money';
import { Badge } from '@/components/ui/badge';
import type { BadgeProps } from '@/components/ui/badge';
import { Button } from '@/components/ui/button';
import { Table } from '@/components/ui/table';
import { formatAmount } from '@/lib/format';
import { formatTimestamp } from '@/lib/time';

import { frtTone, logColumns, requestTimeTone } from './constants';
import type { LogColumn, Visibility } from './constants';
import { LogDetails } from './log-details';
import { RefusalBadge } from './refusal';
import { toneBadge } from './tone';
import { UserPopover } from './user-popover';

const typeTone: Record<number, BadgeProps['tone']> = {
  1: 'blue',
  2: 'green',
  3: 'orange',
  4: 'purple',
  5: 'red',
};

export function TypeBadge({ type }: { type: number }) {
  const { t } = useTranslation('log');
  const known = logTypes.find((x) => x === type);
  return (
    <Badge tone={typeTone[type] ?? 'neutral'}>
      {known === undefined ? t('type.unknown') : t(`type.${known}`)}
    </Badge>
  );
}

/** Request time and, for a stream, the first-response time, in their threshold colours. */
function UseTime({ log, frt }: { log: LogEntry; frt: number | undefined }) {
  const { t } = useTranslation('log');
  return (
    <div className="logs__timing">
      {toneBadge(
        requestTimeTone(log.use_time),
        t('cell.seconds', { seconds: log.use_time }),
        'use-time',
      )}
      {log.is_stream && frt !== undefined && frt > 0
        ? toneBadge(
            frtTone(frt / 1000),
            t('cell.seconds', { seconds: formatAmount(frt / 1000) }),
            'frt',
          )
        : null}
      <Badge tone="neutral">{log.is_stream ? t('cell.stream') : t('cell.nonStream')}</Badge>
    </div>
  );
}

export interface LogsTableProps {
  logs: LogEntry[];
  visible: Visibility;
  admin: boolean;
}

/** The usage log table: one row per entry, each expandable into its details. */
export function LogsTable({ logs, visible, admin }: LogsTableProps) {
  const { t } = useTranslation('log');
  const [expanded, setExpanded] = useState<number[]>([]);
  const shown = logColumns.filter((c) => visible[c]);

  const cell = (log: LogEntry, column: LogColumn, other: LogOther, retry: string): ReactNode => {
    const frt = other.frt;
    const request = isRequestType(log.type);
    switch (column) {
      case 'time':
        return formatTimestamp(log.created_at);
      case 'channel':
        return log.channel > 0 ? (
          <Badge tone="neutral" title={log.channel_name || undefined}>
            {log.channel}
          </Badge>
        ) : null;
      case 'username':
        return admin && log.user_id > 0 ? (
          <UserPopover userId={log.user_id} username={log.username} />
        ) : (
          log.username
        );
      case 'token':
        return request && log.token_name ? <Badge tone="neutral">{log.token_name}</Badge> : null;
      case 'group':
        return request && log.group ? <Badge tone="neutral">{log.group}</Badge> : null;
      case 'type':
        return <TypeBadge type={log.type} />;
      case 'model':
        return request ? log.model_name : null;
      case 'useTime':
        return request ? <UseTime log={log} frt={frt} /> : null;
      case 'prompt':
        return request ? log.prompt_tokens : null;
      case 'completion':
        return request ? log.completion_tokens : null;
      case 'cost':
        return request ? <Money quota={log.quota} /> : null;
      case 'retry':
        return retry ? t('cell.retry', { path: retry }) : null;
      case 'content':
        return (
          <>
            <RefusalBadge other={other} />
            <span className="logs__content" title={log.content}>
              {log.content}
            </span>
          </>
        );
    }
  };

  return (
    <Table className="logs__table">
      <thead>
        <tr>
          <th>
            <span className="visually-hidden">{t('column.expand')}</span>
          </th>
          {shown.map((column) => (
            <th key={column} data-column={column}>
              {t(`column.${column}`)}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {logs.length === 0 ? (
          <tr>
            <td colSpan={shown.length + 1}>{t('empty')}</td>
          </tr>
        ) : null}
        {logs.map((log) => {
          const other = parseLogOther(log.other);
          const used = other.admin_info?.use_channel ?? [];
          const retry = admin && used.length > 1 ? used.join(' → ') : '';
          const open = expanded.includes(log.id);
          return (
            <Fragment key={log.id}>
              <tr aria-label={`log ${log.id}`} data-type={log.type}>
                <td>
                  <Button
                    size="icon"
                    variant="ghost"
                    aria-expanded={open}
                    aria-label={open ? t('cell.collapse') : t('cell.expand')}
                    onClick={() =>
                      setExpanded(
                        open ? expanded.filter((id) => id !== log.id) : [...expanded, log.id],
                      )
                    }
                  >
                    {open ? <ChevronDown aria-hidden /> : <ChevronRight aria-hidden />}
                  </Button>
                </td>
                {shown.map((column) => (
                  <td key={column} data-column={column}>
                    {cell(log, column, other, retry)}
                  </td>
                ))}
              </tr>
              {open ? (
                <tr data-row="details" aria-label={t('detail.title')}>
                  <td colSpan={shown.length + 1}>
                    <LogDetails log={log} other={other} admin={admin} />
                  </td>
                </tr>
              ) : null}
            </Fragment>
          );
        })}
      </tbody>
    </Table>
  );
}
