import { useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';

import { selfQueryOptions } from '@/api/personal';
import { Money } from '@/components/common/money';
import { PageHeader } from '@/components/layout/page-header';
import { Card, CardContent, CardHeader, CardTitle } from '@/components/ui/card';
import { Spinner } from '@/components/ui/spinner';
import { useSession } from '@/stores/session';

import { HistoryCard } from './history-card';
import { OnlineTopUpCard } from './online-card';
import { RedeemCard } from './redeem-card';

import '@/components/data-table/data-table.css';
import './topup.css';

/** /topup (钱包): balance, redeem a code, online top-up, and the top-up history. */
export function TopUpPage() {
  const { t } = useTranslation('topup');
  const stored = useSession((s) => s.user);
  const self = useQuery(selfQueryOptions);
  const user = self.data ?? stored;
  return (
    <>
      <PageHeader title={t('title')} />
      <div className="topup__grid">
        <Card>
          <CardHeader>
            <CardTitle>{t('balance.title')}</CardTitle>
          </CardHeader>
          <CardContent>
            {user ? (
              <dl className="topup__balance">
                <div>
                  <dt>{t('balance.current')}</dt>
                  <dd data-testid="balance">
                    <Money quota={user.quota} />
                  </dd>
                </div>
                <div>
                  <dt>{t('balance.used')}</dt>
                  <dd>
                    <Money quota={user.used_quota} />
                  </dd>
                </div>
                <div>
                  <dt>{t('balance.requests')}</dt>
                  <dd>{user.request_count}</dd>
                </div>
              </dl>
            ) : (
              <Spinner label={t('loading')} />
            )}
          </CardContent>
        </Card>
        <RedeemCard />
        <OnlineTopUpCard />
      </div>
      <HistoryCard />
    </>
  );
}
