import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';

import { userQueryOptions } from '@/api/users';
import { Money } from '@/components/common/money';
import { Popover, PopoverContent, PopoverTrigger } from '@/components/ui/popover';
import { Spinner } from '@/components/ui/spinner';

/** An admin's username link: opens the user's quota and request count (GET /api/user/{id}). */
export function UserPopover({ userId, username }: { userId: number; username: string }) {
  const { t } = useTranslation('log');
  const [open, setOpen] = useState(false);
  const user = useQuery({
    ...userQueryOptions(userId),
    enabled: open && userId > 0,
    meta: { silent: true },
  });
  return (
    <Popover open={open} onOpenChange={setOpen}>
      <PopoverTrigger asChild>
        <button
          type="button"
          className="logs__user"
          aria-label={t('cell.userDetail', { name: username })}
        >
          {username}
        </button>
      </PopoverTrigger>
      <PopoverContent aria-label={t('user.title')}>
        <p className="logs__popover-title">{t('user.title')}</p>
        {user.isError ? (
          <p role="alert">{t('user.loadFailed')}</p>
        ) : !user.data ? (
          <Spinner label={t('user.loading')} />
        ) : (
          <dl className="logs__facts">
            <div>
              <dt>{t('user.username')}</dt>
              <dd>{user.data.username}</dd>
            </div>
            <div>
              <dt>{t('user.quota')}</dt>
              <dd>
                <Money quota={user.data.quota} />
              </dd>
            </div>
            <div>
              <dt>{t('user.usedQuota')}</dt>
              <dd>
                <Money quota={user.data.used_quota} />
              </dd>
            </div>
            <div>
              <dt>{t('user.requestCount')}</dt>
              <dd>{user.data.request_count}</dd>
            </div>
          </dl>
        )}
      </PopoverContent>
    </Popover>
  );
}
