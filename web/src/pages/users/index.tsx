import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { ChevronLeft, ChevronRight, Plus, Search } from 'lucide-react';
import { useState } from 'react';
import type { FormEvent } from 'react';
import { useTranslation } from 'react-i18next';

import { manageUser, usersQueryOptions } from '@/api/users';
import type { ManageAction, ManageResult, UserListQuery, UserPage } from '@/api/users';
import { PageHeader } from '@/components/layout/page-header';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Input } from '@/components/ui/input';
import { Select } from '@/components/ui/select';
import { Spinner } from '@/components/ui/spinner';
import { pageSizes, usePreferences } from '@/stores/preferences';
import type { PageSize } from '@/stores/preferences';
import { toast } from '@/stores/toasts';

import { AddUserDialog } from './add-user-dialog';
import { GroupInput } from './group-input';
import { UsersTable } from './users-table';

import './users.css';

/** /user (admin, 管理用户): search, server paging, per-row actions, add user. */
export function UsersPage() {
  const { t } = useTranslation('users');
  const queryClient = useQueryClient();
  const pageSize = usePreferences((s) => s.pageSize);
  const setPageSize = usePreferences((s) => s.setPageSize);
  const [filter, setFilter] = useState({ keyword: '', group: '' });
  const [draft, setDraft] = useState(filter);
  const [page, setPage] = useState(1);
  const [adding, setAdding] = useState(false);
  const query: UserListQuery = { ...filter, page, pageSize };
  const users = useQuery(usersQueryOptions(query));

  const manage = useMutation({
    mutationFn: ({ id, action }: { id: number; action: ManageAction }) => manageUser(id, action),
    onSuccess: (result: ManageResult, { id }) => {
      queryClient.setQueryData<UserPage>(usersQueryOptions(query).queryKey, (old) =>
        old
          ? {
              ...old,
              items: old.items.map((u) =>
                u.id === id
                  ? { ...u, role: result.role, status: result.status, DeletedAt: result.DeletedAt }
                  : u,
              ),
            }
          : old,
      );
      void queryClient.invalidateQueries({ queryKey: ['users', 'detail', id] });
      toast.success(t('toast.managed'));
    },
  });

  const search = (event: FormEvent) => {
    event.preventDefault();
    setFilter(draft);
    setPage(1);
  };

  const total = users.data?.total ?? 0;
  const pages = Math.max(1, Math.ceil(total / pageSize));

  return (
    <>
      <PageHeader
        title={t('list.title')}
        actions={
          <Button onClick={() => setAdding(true)}>
            <Plus aria-hidden />
            {t('list.add')}
          </Button>
        }
      />
      <form className="users__search" onSubmit={search} role="search">
        <Input
          aria-label={t('list.search.keyword')}
          placeholder={t('list.search.keyword')}
          value={draft.keyword}
          onChange={(e) => setDraft({ ...draft, keyword: e.target.value })}
        />
        <GroupInput
          id="users-search-group"
          aria-label={t('list.search.group')}
          value={draft.group}
          onChange={(group) => setDraft({ ...draft, group })}
          allowAny
        />
        <Button type="submit" variant="secondary">
          <Search aria-hidden />
          {t('list.search.submit')}
        </Button>
      </form>
      {users.isError && !users.data ? (
        <Alert tone="danger">{t('list.loadFailed')}</Alert>
      ) : !users.data ? (
        <Spinner label={t('list.loading')} />
      ) : (
        <UsersTable
          users={users.data.items}
          busy={manage.isPending}
          onAction={(id, action) => manage.mutate({ id, action })}
        />
      )}
      <nav className="users__pager" aria-label={t('list.pager.label')}>
        <span>{t('list.pager.total', { count: total })}</span>
        <Button
          variant="ghost"
          size="icon"
          aria-label={t('list.pager.previous')}
          disabled={page <= 1}
          onClick={() => setPage(page - 1)}
        >
          <ChevronLeft aria-hidden />
        </Button>
        <span>{t('list.pager.page', { page, pages })}</span>
        <Button
          variant="ghost"
          size="icon"
          aria-label={t('list.pager.next')}
          disabled={page >= pages}
          onClick={() => setPage(page + 1)}
        >
          <ChevronRight aria-hidden />
        </Button>
        <Select
          className="users__page-size"
          aria-label={t('list.pager.pageSize')}
          value={pageSize}
          onChange={(e) => {
            setPageSize(Number(e.target.value) as PageSize);
            setPage(1);
          }}
        >
          {pageSizes.map((size) => (
            <option key={size} value={size}>
              {t('list.pager.perPage', { size })}
            </option>
          ))}
        </Select>
      </nav>
      <AddUserDialog open={adding} onOpenChange={setAdding} />
    </>
  );
}
