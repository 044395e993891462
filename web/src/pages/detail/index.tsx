import { useQuery } from '@tanstack/react-query';
import { Search } from 'lucide-react';
import { lazy, Suspense, useState } from 'react';
import type { FormEvent } from 'react';
import { useTranslation } from 'react-i18next';

import {
  dashboardQueryOptions,
  dashboardUsersQueryOptions,
  granularities,
  isGranularity,
} from '@/api/dashboard';
import type { DashboardQuery, Granularity } from '@/api/dashboard';
import { useStatus } from '@/api/status';
import { isAdmin } from '@/api/user';
import { Money } from '@/components/common/money';
import { PageHeader } from '@/components/layout/page-header';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Input } from '@/components/ui/input';
import { Select } from '@/components/ui/select';
import { Spinner } from '@/components/ui/spinner';
import { Table } from '@/components/ui/table';
import { formatCompact } from '@/lib/format';
import { fromLocalInput, toLocalInput } from '@/lib/time';
import { useSession } from '@/stores/session';
import { toast } from '@/stores/toasts';

import { aggregate, byUser, defaultDashboardWindow, MAX_SELF_SPAN, perMinute } from './aggregate';
import type { Dashboard } from './aggregate';
import { CacheRateCard } from './cache-rate';

import './detail.css';

const DashboardCharts = lazy(async () => ({ default: (await import('./charts')).DashboardCharts }));

/** The first query: the status's default granularity and its window. */
function initialQuery(defaultTime: string): DashboardQuery {
  const granularity: Granularity = isGranularity(defaultTime) ? defaultTime : 'hour';
  return { ...defaultDashboardWindow(granularity), granularity, username: '' };
}

function Totals({ dashboard, query }: { dashboard: Dashboard; query: DashboardQuery }) {
  const { t } = useTranslation('detail');
  const { quota, count, tokens } = dashboard.totals;
  const items = [
    ['quota', <Money key="q" quota={quota} />],
    ['count', formatCompact(count)],
    ['tokens', formatCompact(tokens)],
    ['rpm', String(perMinute(count, query.start, query.end))],
    ['tpm', String(perMinute(tokens, query.start, query.end))],
  ] as const;
  return (
    <dl className="detail__totals" aria-label={t('total.label')}>
      {items.map(([key, value]) => (
        <div key={key} className="detail__total" data-total={key}>
          <dt>{t(`total.${key}`)}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

function ModelTable({ dashboard }: { dashboard: Dashboard }) {
  const { t } = useTranslation('detail');
  const total = dashboard.totals.quota;
  return (
    <section className="detail__models" aria-label={t('table.title')}>
      <h2>{t('table.title')}</h2>
      <Table>
        <thead>
          <tr>
            <th>{t('table.model')}</th>
            <th>{t('table.count')}</th>
            <th>{t('table.tokens')}</th>
            <th>{t('table.quota')}</th>
            <th>{t('table.share')}</th>
          </tr>
        </thead>
        <tbody>
          {dashboard.models.map((m) => (
            <tr key={m.model} aria-label={m.model || t('table.unnamed')}>
              <td>{m.model || t('table.unnamed')}</td>
              <td>{m.count}</td>
              <td>{m.tokens}</td>
              <td>
                <Money quota={m.quota} />
              </td>
              <td>{total > 0 ? `${((m.quota / total) * 100).toFixed(1)}%` : '—'}</td>
            </tr>
          ))}
        </tbody>
      </Table>
    </section>
  );
}

/** Admins without a user filter: who spent what in the window (GET /api/data/users). */
function UserTable({ query }: { query: DashboardQuery }) {
  const { t } = useTranslation('detail');
  const data = useQuery(dashboardUsersQueryOptions(query.start, query.end));
  if (!data.data || data.data.length === 0) return null;
  const users = byUser(data.data);
  const total = users.reduce((sum, u) => sum + u.quota, 0);
  return (
    <section className="detail__models" aria-label={t('users.title')}>
      <h2>{t('users.title')}</h2>
      <Table>
        <thead>
          <tr>
            <th>{t('users.username')}</th>
            <th>{t('table.count')}</th>
            <th>{t('table.tokens')}</th>
            <th>{t('table.quota')}</th>
            <th>{t('table.share')}</th>
          </tr>
        </thead>
        <tbody>
          {users.map((u) => (
            <tr key={u.username} aria-label={u.username}>
              <td>{u.username}</td>
              <td>{u.count}</td>
              <td>{u.tokens}</td>
              <td>
                <Money quota={u.quota} />
              </td>
              <td>{total > 0 ? `${((u.quota / total) * 100).toFixed(1)}%` : '—'}</td>
            </tr>
          ))}
        </tbody>
      </Table>
    </section>
  );
}

/** /detail (数据看板): totals, charts over time and by model, from the hourly aggregates. */
export function DetailPage() {
  const { t } = useTranslation('detail');
  const status = useStatus();
  const admin = isAdmin(useSession((s) => s.user));
  const [query, setQuery] = useState(() => initialQuery(status.data_export_default_time));
  const [draft, setDraft] = useState(() => ({
    ...query,
    start: toLocalInput(query.start),
    end: toLocalInput(query.end),
  }));
  const data = useQuery(dashboardQueryOptions(query, admin));
  const dashboard = data.data
    ? aggregate(data.data, query.granularity, query.start, query.end)
    : undefined;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const next = { ...draft, start: fromLocalInput(draft.start), end: fromLocalInput(draft.end) };
    if (!admin && next.end - next.start > MAX_SELF_SPAN) {
      toast.error(t('spanTooLong'));
      return;
    }
    setQuery(next);
  };

  return (
    <>
      <PageHeader title={t('title')} description={t('note')} />
      {status.enable_data_export ? null : <Alert tone="info">{t('disabled')}</Alert>}
      <form
        className="detail__filters"
        onSubmit={submit}
        role="search"
        aria-label={t('filter.label')}
      >
        <label className="detail__field">
          <span>{t('filter.start')}</span>
          <Input
            type="datetime-local"
            aria-label={t('filter.start')}
            value={draft.start}
            onChange={(e) => setDraft({ ...draft, start: e.target.value })}
          />
        </label>
        <label className="detail__field">
          <span>{t('filter.end')}</span>
          <Input
            type="datetime-local"
            aria-label={t('filter.end')}
            value={draft.end}
            onChange={(e) => setDraft({ ...draft, end: e.target.value })}
          />
        </label>
        <label className="detail__field">
          <span>{t('filter.granularity')}</span>
          <Select
            aria-label={t('filter.granularity')}
            value={draft.granularity}
            onChange={(e) =>
              isGranularity(e.target.value) && setDraft({ ...draft, granularity: e.target.value })
            }
          >
            {granularities.map((g) => (
              <option key={g} value={g}>
                {t(`granularity.${g}`)}
              </option>
            ))}
          </Select>
        </label>
        {admin ? (
          <Input
            aria-label={t('filter.username')}
            placeholder={t('filter.username')}
            value={draft.username}
            onChange={(e) => setDraft({ ...draft, username: e.target.value })}
          />
        ) : null}
        <Button type="submit">
          <Search aria-hidden />
          {t('filter.submit')}
        </Button>
      </form>
      {data.isError && !data.data ? (
        <Alert tone="danger">{t('loadFailed')}</Alert>
      ) : !dashboard ? (
        <Spinner label={t('loading')} />
      ) : (
        <>
          <Totals dashboard={dashboard} query={query} />
          {dashboard.models.length === 0 ? (
            <p className="detail__empty">{t('empty')}</p>
          ) : (
            <>
              <Suspense fallback={<Spinner label={t('chart.loading')} />}>
                <DashboardCharts dashboard={dashboard} granularity={query.granularity} />
              </Suspense>
              <ModelTable dashboard={dashboard} />
              {admin && query.username.trim() === '' ? <UserTable query={query} /> : null}
            </>
          )}
          {admin && query.username.trim() === '' ? (
            <CacheRateCard start={query.start} end={query.end} />
          ) : null}
        </>
      )}
    </>
  );
}
