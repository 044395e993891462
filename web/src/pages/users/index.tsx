import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Plus, Search } from 'lucide-react';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';

import { manageUser, usersQueryOptions } from '@/api/users';
import type { ManageAction, ManageResult, UserPage } from '@/api/users';
import { ListBody } from '@/components/data-table/list-body';
import { Pager } from '@/components/data-table/pager';
import { useListPage } from '@/components/data-table/use-list-page';
import { PageHeader } from '@/components/layout/page-header';
import { Button } from '@/components/ui/button';
import { Input } from '@/components/ui/input';
import { toast } from '@/stores/toasts';

import { AddUserDialog } from './add-user-dialog';
import { GroupInput } from './group-input';
import { UsersTable } from './users-table';

import '@/components/data-table/data-table.css';
import './users.css';

/** /user (admin, 管理用户): search, server paging, per-row actions, add user. */
export function UsersPage() {
  const { t } = useTranslation('users');
  const queryClient = useQueryClient();
  const list = useListPage({ keyword: '', group: '' });
  const [adding, setAdding] = useState(false);
  const users = useQuery(usersQueryOptions(list.params));

  // The row takes the role and status the server returns (spec 01 §4), without a refetch.
  const manage = useMutation({
    mutationFn: ({ id, action }: { id: number; action: ManageAction }) => manageUser(id, action),
    onSuccess: (result: ManageResult, { id }) => {
      queryClient.setQueryData<UserPage>(usersQueryOptions(list.params).queryKey, (old) =>
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

  const total = users.data?.total ?? 0;
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
      <form className="data-toolbar" onSubmit={list.submit} role="search">
        <Input
          aria-label={t('list.search.keyword')}
          placeholder={t('list.search.keyword')}
          value={list.draft.keyword}
          onChange={(e) => list.edit({ keyword: e.target.value })}
        />
        <GroupInput
          id="users-search-group"
          aria-label={t('list.search.group')}
          value={list.draft.group}
          onChange={(group) => list.edit({ group })}
          allowAny
        />
        <Button type="submit" variant="secondary">
          <Search aria-hidden />
          {t('list.search.submit')}
        </Button>
      </form>
      <ListBody query={users} loading={t('list.loading')} failed={t('list.loadFailed')}>
        {(data) => (
          <UsersTable
            users={data.items}
            busy={manage.isPending}
            onAction={(id, action) => manage.mutate({ id, action })}
          />
        )}
      </ListBody>
      <Pager {...list.pager(total)} totalLabel={t('list.pager.total', { count: total })} />
      <AddUserDialog open={adding} onOpenChange={setAdding} />
    </>
  );
}
