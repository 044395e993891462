import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';

import { isDeregistered, ROLE_ADMIN, STATUS_ENABLED } from '@/api/user';
import type { User } from '@/api/user';
import type { ManageAction } from '@/api/users';
import { ConfirmDialog, useConfirm } from '@/components/common/confirm-dialog';
import { Money } from '@/components/common/money';
import { RoleBadge, StatusBadge } from '@/components/common/user-badges';
import { Button } from '@/components/ui/button';
import { Table } from '@/components/ui/table';

/** Status 3 exists but cannot be enabled from the list (spec 01 §4). */
const STATUS_LOCKED = 3;

export interface UsersTableProps {
  users: User[];
  busy: boolean;
  onAction: (id: number, action: ManageAction) => void;
}

/** The user list: one row per user, deregistered rows without actions. */
export function UsersTable({ users, busy, onAction }: UsersTableProps) {
  const { t } = useTranslation('users');
  const confirm = useConfirm();

  return (
    <>
      <Table>
        <thead>
          <tr>
            <th>{t('table.column.id')}</th>
            <th>{t('table.column.username')}</th>
            <th>{t('table.column.group')}</th>
            <th>{t('table.column.quota')}</th>
            <th>{t('table.column.requests')}</th>
            <th>{t('table.column.role')}</th>
            <th>{t('table.column.status')}</th>
            <th>{t('table.column.actions')}</th>
          </tr>
        </thead>
        <tbody>
          {users.length === 0 ? (
            <tr>
              <td colSpan={8}>{t('table.empty')}</td>
            </tr>
          ) : null}
          {users.map((user) => {
            const gone = isDeregistered(user);
            return (
              <tr
                key={user.id}
                data-state={gone ? 'deregistered' : undefined}
                aria-label={user.username}
              >
                <td>{user.id}</td>
                <td>
                  <div className="users__name">
                    <span>{user.username}</span>
                    {user.display_name && user.display_name !== user.username ? (
                      <small>{user.display_name}</small>
                    ) : null}
                  </div>
                </td>
                <td>{user.group}</td>
                <td>
                  <div className="users__quota">
                    <Money
                      quota={user.quota}
                      label={(quota) => t('table.quota.remaining', { quota })}
                    />
                    <small>
                      <Money
                        quota={user.used_quota}
                        label={(quota) => t('table.quota.used', { quota })}
                      />
                    </small>
                  </div>
                </td>
                <td>{user.request_count}</td>
                <td>
                  <RoleBadge role={user.role} />
                </td>
                <td>
                  <StatusBadge status={user.status} deregistered={gone} />
                </td>
                <td>
                  {gone ? (
                    <span>{t('table.deregistered')}</span>
                  ) : (
                    <div className="users__actions">
                      <Button
                        size="sm"
                        variant="ghost"
                        disabled={busy || user.role >= ROLE_ADMIN}
                        onClick={() => onAction(user.id, 'promote')}
                      >
                        {t('action.promote')}
                      </Button>
                      <Button
                        size="sm"
                        variant="ghost"
                        disabled={busy || user.role < ROLE_ADMIN}
                        onClick={() => onAction(user.id, 'demote')}
                      >
                        {t('action.demote')}
                      </Button>
                      {user.status === STATUS_ENABLED ? (
                        <Button
                          size="sm"
                          variant="ghost"
                          disabled={busy}
                          onClick={() => onAction(user.id, 'disable')}
                        >
                          {t('action.disable')}
                        </Button>
                      ) : (
                        <Button
                          size="sm"
                          variant="ghost"
                          disabled={busy || user.status === STATUS_LOCKED}
                          onClick={() => onAction(user.id, 'enable')}
                        >
                          {t('action.enable')}
                        </Button>
                      )}
                      <Button size="sm" variant="ghost" asChild>
                        <Link to={`/user/edit/${user.id}`}>{t('action.edit')}</Link>
                      </Button>
                      <Button
                        size="sm"
                        variant="danger"
                        disabled={busy}
                        onClick={() =>
                          confirm.ask({
                            title: t('delete.title'),
                            description: t('delete.description', { username: user.username }),
                            confirmLabel: t('delete.confirm'),
                            onConfirm: () => onAction(user.id, 'delete'),
                          })
                        }
                      >
                        {t('action.delete')}
                      </Button>
                    </div>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </Table>
      <ConfirmDialog {...confirm.dialog} />
    </>
  );
}
