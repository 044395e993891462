import { FlaskConical, Plus, RefreshCw, Wallet, Wrench } from 'lucide-react';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';

import { Button } from '@/components/ui/button';

interface Job {
  pending: boolean;
  run: () => void;
}

/** The channel page's header buttons: refresh, test all, update balances, fix, add. */
export function ChannelsHeaderActions({
  onRefresh,
  testAll,
  allBalances,
  fix,
}: {
  onRefresh: () => void;
  testAll: Job;
  allBalances: Job;
  fix: Job;
}) {
  const { t } = useTranslation('channels');
  return (
    <>
      <Button
        variant="ghost"
        size="icon"
        aria-label={t('list.refresh')}
        title={t('list.refresh')}
        onClick={onRefresh}
      >
        <RefreshCw aria-hidden />
      </Button>
      <Button variant="secondary" disabled={testAll.pending} onClick={testAll.run}>
        <FlaskConical aria-hidden />
        {t('list.testAll')}
      </Button>
      <Button variant="secondary" disabled={allBalances.pending} onClick={allBalances.run}>
        <Wallet aria-hidden />
        {t('list.updateBalances')}
      </Button>
      <Button variant="secondary" disabled={fix.pending} onClick={fix.run}>
        <Wrench aria-hidden />
        {t('list.fix')}
      </Button>
      <Button asChild>
        <Link to="/channel/add">
          <Plus aria-hidden />
          {t('list.add')}
        </Link>
      </Button>
    </>
  );
}
