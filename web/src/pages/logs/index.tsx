import { useQuery } from '@tanstack/react-query';
import { ChevronLeft, ChevronRight, Columns3 } from 'lucide-react';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';

import { logsQueryOptions, logStatQueryOptions } from '@/api/logs';
import type { LogFilter } from '@/api/logs';
import { isAdmin } from '@/api/user';
import { PageHeader } from '@/components/layout/page-header';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Select } from '@/components/ui/select';
import { Spinner } from '@/components/ui/spinner';
import { useFormatQuota } from '@/lib/use-format-quota';
import { pageSizes, usePreferences } from '@/stores/preferences';
import type { PageSize } from '@/stores/preferences';
import { useSession } from '@/stores/session';

import { ColumnsDialog } from './columns-dialog';
import { loadVisibility, saveVisibility } from './constants';
import type { Visibility } from './constants';
import { initialLogFilter, LogFilters } from './log-filters';
import { LogsTable } from './logs-table';

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
  const pageSize = usePreferences((s) => s.pageSize);
  const setPageSize = usePreferences((s) => s.setPageSize);
  const [filter, setFilter] = useState<LogFilter>(() => initialLogFilter());
  const [page, setPage] = useState(1);
  const [visible, setVisibleState] = useState<Visibility>(() => loadVisibility(admin));
  const [columnsOpen, setColumnsOpen] = useState(false);
  const logs = useQuery(logsQueryOptions({ ...filter, page, pageSize }, admin));

  const setVisible = (next: Visibility) => {
    setVisibleState(next);
    saveVisibility(next);
  };
  const total = logs.data?.total ?? 0;
  const pages = Math.max(1, Math.ceil(total / pageSize));

  return (
    <>
      <PageHeader title={t('title')} />
      <LogFilters
        filter={filter}
        admin={admin}
        onSearch={(next) => {
          setFilter(next);
          setPage(1);
        }}
      />
      <div className="logs__toolbar">
        <StatCards filter={filter} admin={admin} />
        <Button variant="secondary" size="sm" onClick={() => setColumnsOpen(true)}>
          <Columns3 aria-hidden />
          {t('columns.open')}
        </Button>
      </div>
      {logs.isError && !logs.data ? (
        <Alert tone="danger">{t('loadFailed')}</Alert>
      ) : !logs.data ? (
        <Spinner label={t('loading')} />
      ) : (
        <LogsTable logs={logs.data.items} visible={visible} admin={admin} />
      )}
      <nav className="logs__pager" aria-label={t('pager.label')}>
        <span>
          {logs.data?.total_exact === false
            ? t('pager.totalAbout', { count: total })
            : t('pager.total', { count: total })}
        </span>
        <Button
          variant="ghost"
          size="icon"
          aria-label={t('pager.previous')}
          disabled={page <= 1}
          onClick={() => setPage(page - 1)}
        >
          <ChevronLeft aria-hidden />
        </Button>
        <span>{t('pager.page', { page, pages })}</span>
        <Button
          variant="ghost"
          size="icon"
          aria-label={t('pager.next')}
          disabled={page >= pages}
          onClick={() => setPage(page + 1)}
        >
          <ChevronRight aria-hidden />
        </Button>
        <Select
          className="logs__page-size"
          aria-label={t('pager.pageSize')}
          value={pageSize}
          onChange={(e) => {
            setPageSize(Number(e.target.value) as PageSize);
            setPage(1);
          }}
        >
          {pageSizes.map((size) => (
            <option key={size} value={size}>
              {t('pager.perPage', { size })}
            </option>
          ))}
        </Select>
      </nav>
      <ColumnsDialog
        open={columnsOpen}
        onOpenChange={setColumnsOpen}
        visible={visible}
        admin={admin}
        onChange={setVisible}
      />
    </>
  );
}
