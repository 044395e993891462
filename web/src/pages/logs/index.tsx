import { useQuery } from '@tanstack/react-query';
import { Columns3 } from 'lucide-react';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';

import { logsQueryOptions, logStatQueryOptions } from '@/api/logs';
import type { LogFilter } from '@/api/logs';
import { isAdmin } from '@/api/user';
import { ColumnsDialog } from '@/components/data-table/columns-dialog';
import { ListBody } from '@/components/data-table/list-body';
import { Pager } from '@/components/data-table/pager';
import { useListPage } from '@/components/data-table/use-list-page';
import { PageHeader } from '@/components/layout/page-header';
import { Button } from '@/components/ui/button';
import { useFormatQuota } from '@/lib/use-format-quota';
import { useColumns } from '@/stores/columns';
import { useSession } from '@/stores/session';

import { adminColumns, logColumns, logColumnSpec } from './constants';
import { initialLogFilter, LogFilters } from './log-filters';
import { LogsTable } from './logs-table';

import '@/components/data-table/data-table.css';
import './logs.css';

/** The quota, RPM and TPM of the current filter (GET /api/log/stat). */
function StatCards({ filter, admin }: { filter: LogFilter; admin: boolean }) {
  const { t } = useTranslation('log');
  const formatQuota = useFormatQuota();
  const stat = useQuery(logStatQueryOptions(filter, admin));
  const value = (n: number | undefined, format: (n: number) => string = String) =>
    n === undefined ? '—' : format(n);
  return (
    <dl className="logs__stats" aria-label={t('stat.label')}>
      <div className="logs__stat" data-stat="quota">
        <dt>{t('stat.quota')}</dt>
        <dd>
          {stat.data?.quota_exact === false
            ? t('stat.about', { value: formatQuota(stat.data.quota) })
            : value(stat.data?.quota, formatQuota)}
        </dd>
      </div>
      <div className="logs__stat" data-stat="rpm">
        <dt>{t('stat.rpm')}</dt>
        <dd>{value(stat.data?.rpm)}</dd>
      </div>
      <div className="logs__stat" data-stat="tpm">
        <dt>{t('stat.tpm')}</dt>
        <dd>{value(stat.data?.tpm)}</dd>
      </div>
    </dl>
  );
}

/** /log (使用日志): filters, stat cards and the paged log table; admins see every user's logs. */
export function LogsPage() {
  const { t } = useTranslation('log');
  const admin = isAdmin(useSession((s) => s.user));
  const list = useListPage<LogFilter>(() => initialLogFilter());
  const columns = useColumns(logColumnSpec(admin));
  const [columnsOpen, setColumnsOpen] = useState(false);
  const logs = useQuery(logsQueryOptions(list.params, admin));
  const total = logs.data?.total ?? 0;

  return (
    <>
      <PageHeader title={t('title')} description={t('note')} />
      <LogFilters filter={list.filter} admin={admin} onSearch={list.apply} />
      <div className="logs__toolbar">
        <StatCards filter={list.filter} admin={admin} />
        <Button variant="secondary" size="sm" onClick={() => setColumnsOpen(true)}>
          <Columns3 aria-hidden />
          {t('columns.open')}
        </Button>
      </div>
      <ListBody query={logs} loading={t('loading')} failed={t('loadFailed')}>
        {(data) => <LogsTable logs={data.items} visible={columns.visible} admin={admin} />}
      </ListBody>
      <Pager
        {...list.pager(total)}
        totalLabel={
          logs.data?.total_exact === false
            ? t('pager.totalAbout', { ns: 'common', count: total })
            : undefined
        }
      />
      <ColumnsDialog
        open={columnsOpen}
        onOpenChange={setColumnsOpen}
        columns={logColumns}
        visible={columns.visible}
        onChange={columns.set}
        onReset={columns.reset}
        label={(column) => t(`column.${column}`)}
        lockedReason={(column) =>
          !admin && adminColumns.includes(column)
            ? t('columns.adminOnly', { ns: 'common' })
            : undefined
        }
      />
    </>
  );
}
