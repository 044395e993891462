import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';

import { topUpsQueryOptions } from '@/api/topup';
import { Pager } from '@/components/data-table/pager';
import { Badge } from '@/components/ui/badge';
import { Card, CardContent, CardHeader, CardTitle } from '@/components/ui/card';
import { Table } from '@/components/ui/table';
import { formatDateTime } from '@/lib/dates';
import { formatAmount } from '@/lib/format';
import { useFormatQuota } from '@/lib/use-format-quota';
import { pageSizes } from '@/stores/preferences';

/** The user's online top-up orders. */
export function HistoryCard() {
  const { t } = useTranslation('topup');
  const formatQuota = useFormatQuota();
  const [page, setPage] = useState(1);
  const [pageSize, setPageSize] = useState<number>(10);
  const orders = useQuery(topUpsQueryOptions(page, pageSize));
  const items = orders.data?.items ?? [];
  return (
    <Card>
      <CardHeader>
        <CardTitle>{t('history.title')}</CardTitle>
      </CardHeader>
      <CardContent>
        <Table className="data-table">
          <thead>
            <tr>
              <th>{t('history.column.tradeNo')}</th>
              <th>{t('history.column.amount')}</th>
              <th>{t('history.column.money')}</th>
              <th>{t('history.column.method')}</th>
              <th>{t('history.column.status')}</th>
              <th>{t('history.column.created')}</th>
              <th>{t('history.column.completed')}</th>
            </tr>
          </thead>
          <tbody>
            {items.length === 0 ? (
              <tr>
                <td colSpan={7}>{t('history.empty')}</td>
              </tr>
            ) : null}
            {items.map((order) => (
              <tr key={order.id} aria-label={order.trade_no}>
                <td>
                  <code>{order.trade_no}</code>
                </td>
                <td>
                  <div className="data-table__stack">
                    <span>{order.amount}</span>
                    <small>{formatQuota(order.quota)}</small>
                  </div>
                </td>
                <td>{t('confirm.money', { money: formatAmount(order.money) })}</td>
                <td>
                  {order.payment_method === 'zfb' || order.payment_method === 'wx'
                    ? t(`online.method.${order.payment_method}`)
                    : order.payment_method}
                </td>
                <td>
                  {order.status === 'success' ? (
                    <Badge tone="green">{t('history.status.success')}</Badge>
                  ) : order.status === 'pending' ? (
                    <Badge tone="orange">{t('history.status.pending')}</Badge>
                  ) : (
                    <Badge>{order.status || t('history.status.unknown')}</Badge>
                  )}
                </td>
                <td>{formatDateTime(order.create_time)}</td>
                <td>{order.complete_time > 0 ? formatDateTime(order.complete_time) : '—'}</td>
              </tr>
            ))}
          </tbody>
        </Table>
        <Pager
          page={page}
          pageSize={pageSize}
          total={orders.data?.total ?? 0}
          sizes={pageSizes}
          onPage={setPage}
          onPageSize={(size) => {
            setPageSize(size);
            setPage(1);
          }}
        />
      </CardContent>
    </Card>
  );
}
