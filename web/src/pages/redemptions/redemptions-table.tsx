import { useTranslation } from 'react-i18next';

import { CODE_UNUSED, CODE_USED } from '@/api/redemptions';
import type { Redemption } from '@/api/redemptions';
import { useSelection } from '@/components/data-table/pager';
import { Badge } from '@/components/ui/badge';
import type { BadgeProps } from '@/components/ui/badge';
import { Button } from '@/components/ui/button';
import { Table } from '@/components/ui/table';
import { formatDateTime } from '@/lib/dates';
import { useFormatQuota } from '@/lib/use-format-quota';

export type CodeAction = 'copy' | 'enable' | 'disable' | 'edit' | 'delete';

const tones: Record<number, BadgeProps['tone']> = { 1: 'green', 2: 'red', 3: 'neutral' };

/** Spec 02 §4: 1 unused, 2 disabled, 3 used. */
export function CodeStatus({ status }: { status: number }) {
  const { t } = useTranslation('redemption');
  return (
    <Badge tone={tones[status] ?? 'neutral'}>
      {status === 1 || status === 2 || status === 3 ? t(`status.${status}`) : t('status.unknown')}
    </Badge>
  );
}

export interface RedemptionsTableProps {
  codes: Redemption[];
  selected: number[];
  onSelect: (ids: number[]) => void;
  busy: boolean;
  onAction: (code: Redemption, action: CodeAction) => void;
}

export function RedemptionsTable({
  codes,
  selected,
  onSelect,
  busy,
  onAction,
}: RedemptionsTableProps) {
  const { t } = useTranslation('redemption');
  const formatQuota = useFormatQuota();
  const selection = useSelection(codes, selected, onSelect);
  return (
    <Table className="data-table">
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
          <th>{t('column.id')}</th>
          <th>{t('column.name')}</th>
          <th>{t('column.status')}</th>
          <th>{t('column.quota')}</th>
          <th>{t('column.created')}</th>
          <th>{t('column.redeemer')}</th>
          <th>{t('column.actions')}</th>
        </tr>
      </thead>
      <tbody>
        {codes.length === 0 ? (
          <tr>
            <td colSpan={8}>{t('list.empty')}</td>
          </tr>
        ) : null}
        {codes.map((code) => {
          const label = `${code.id} ${code.name}`;
          return (
            <tr
              key={code.id}
              aria-label={label}
              data-state={code.status === CODE_UNUSED ? undefined : 'off'}
            >
              <td>
                <input
                  type="checkbox"
                  aria-label={t('action.select', { name: label })}
                  checked={selection.has(code.id)}
                  onChange={(e) => selection.toggle(code.id, e.target.checked)}
                />
              </td>
              <td>{code.id}</td>
              <td>{code.name}</td>
              <td>
                <CodeStatus status={code.status} />
              </td>
              <td>{formatQuota(code.quota)}</td>
              <td>{formatDateTime(code.created_time)}</td>
              <td>
                {code.used_user_id > 0 ? (
                  <div className="data-table__stack">
                    <span>{t('redeemer.user', { id: code.used_user_id })}</span>
                    {code.redeemed_time > 0 ? (
                      <small>{formatDateTime(code.redeemed_time)}</small>
                    ) : null}
                  </div>
                ) : (
                  t('redeemer.none')
                )}
              </td>
              <td>
                <div className="data-table__actions">
                  <Button size="sm" variant="ghost" onClick={() => onAction(code, 'copy')}>
                    {t('action.copy')}
                  </Button>
                  {code.status === CODE_UNUSED ? (
                    <Button
                      size="sm"
                      variant="ghost"
                      disabled={busy}
                      onClick={() => onAction(code, 'disable')}
                    >
                      {t('action.disable')}
                    </Button>
                  ) : (
                    <Button
                      size="sm"
                      variant="ghost"
                      disabled={busy || code.status === CODE_USED}
                      onClick={() => onAction(code, 'enable')}
                    >
                      {t('action.enable')}
                    </Button>
                  )}
                  <Button
                    size="sm"
                    variant="ghost"
                    disabled={code.status !== CODE_UNUSED}
                    onClick={() => onAction(code, 'edit')}
                  >
                    {t('action.edit')}
                  </Button>
                  <Button
                    size="sm"
                    variant="danger"
                    disabled={busy}
                    onClick={() => onAction(code, 'delete')}
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
