import { useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';

import { selfQueryOptions } from '@/api/personal';
import { ROLE_ROOT } from '@/api/user';
import { PageHeader } from '@/components/layout/page-header';
import { Alert } from '@/components/ui/alert';
import { Spinner } from '@/components/ui/spinner';

import { AccountCard } from './account-card';
import { BackupTokensCard } from './backup-tokens-card';
import { BindingsCard } from './bindings-card';
import { InviteCard } from './invite-card';
import { NotificationCard } from './notification-card';
import { ProfileCard } from './profile-card';
import { TwoFactorCard } from './two-factor-card';

import './personal.css';

/**
 * /personal: profile, bindings, invitations, notifications, two-factor sign-in, root's backup
 * tokens, token, password, deletion.
 */
export function PersonalPage() {
  const { t } = useTranslation('personal');
  const self = useQuery(selfQueryOptions);

  return (
    <>
      <PageHeader title={t('title')} />
      {self.isError && !self.data ? (
        <Alert tone="danger">{t('loadFailed')}</Alert>
      ) : !self.data ? (
        <Spinner label={t('loading')} />
      ) : (
        <div className="personal">
          <ProfileCard user={self.data} />
          <BindingsCard user={self.data} />
          <InviteCard user={self.data} />
          <NotificationCard key={self.data.setting} user={self.data} />
          <TwoFactorCard />
          {self.data.role === ROLE_ROOT ? <BackupTokensCard /> : null}
          <AccountCard user={self.data} />
        </div>
      )}
    </>
  );
}
