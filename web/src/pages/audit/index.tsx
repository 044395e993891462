import { useQuery } from '@tanstack/react-query';
import { Search } from 'lucide-react';
import { useTranslation } from 'react-i18next';

import { auditQueryOptions } from '@/api/audit';
import type { AuditEntry } from '@/api/audit';
import { ListBody } from '@/components/data-table/list-body';
import { Pager } from '@/components/data-table/pager';
import { useListPage } from '@/components/data-table/use-list-page';
import { PageHeader } from '@/components/layout/page-header';
import { Button } from '@/components/ui/button';
import { Input } from '@/components/ui/input';
import { Table } from '@/components/ui/table';
import { formatDateTime } from '@/lib/dates';

import '@/components/data-table/data-table.css';

/**
 * /audit (root): the append-only record of every admin action that moves money or touches a
 * secret, newest first, filtered by action (a prefix ending in `.` matches a family) and target.
 */
export function AuditPage() {
  const { t } = useTranslation('audit');
  const list = useListPage({ action: '', target: '' });
  const rows = useQuery(auditQueryOptions(list.params));
  return (
    <>
      <PageHeader title={t('title')} description={t('description')} />
      <form className="data-toolbar" onSubmit={list.submit} role="search">
        <Input
          aria-label={t('search.action')}
          placeholder={t('search.action')}
          value={list.draft.action}
          onChange={(e) => list.edit({ action: e.target.value })}
        />
        <Input
          aria-label={t('search.target')}
          placeholder={t('search.target')}
          value={list.draft.target}
          onChange={(e) => list.edit({ target: e.target.value })}
        />
        <Button type="submit" variant="secondary">
          <Search aria-hidden />
          {t('search.submit')}
        </Button>
      </form>
      <ListBody query={rows} loading={t('loading')} failed={t('loadFailed')}>
        {(page) => <AuditTable rows={page.items} />}
      </ListBody>
      <Pager {...list.pager(rows.data?.total ?? 0)} />
    </>
  );
}

function AuditTable({ rows }: { rows: AuditEntry[] }) {
  const { t } = useTranslation('audit');
  return (
    <Table className="data-table">
      <thead>
        <tr>
          <th>{t('column.time')}</th>
          <th>{t('column.actor')}</th>
          <th>{t('column.action')}</th>
          <th>{t('column.target')}</th>
          <th>{t('column.before')}</th>
          <th>{t('column.after')}</th>
          <th>{t('column.ip')}</th>
        </tr>
      </thead>
      <tbody>
        {rows.length === 0 ? (
          <tr>
            <td colSpan={7}>{t('empty')}</td>
          </tr>
        ) : (
          rows.map((row) => (
            <tr key={row.id}>
              <td>{formatDateTime(row.created_at)}</td>
              <td>{row.actor_id === 0 ? t('system') : `${row.actor_name} (#${row.actor_id})`}</td>
              <td>
                <code>{row.action}</code>
              </td>
              <td>{row.target}</td>
              <td>
                <code>{row.before}</code>
              </td>
              <td>
                <code>{row.after}</code>
              </td>
              <td>{row.ip}</td>
            </tr>
          ))
        )}
      </tbody>
    </Table>
  );
}
