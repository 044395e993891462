import { RefreshCw, TriangleAlert } from 'lucide-react';
import { useTranslation } from 'react-i18next';

import { Button } from '@/components/ui/button';

import './route-guards.css';

/** Shown when a route fails to render or its code fails to load. */
export function RouteError() {
  const { t } = useTranslation();
  return (
    <div className="status-screen">
      <div className="status-screen__card" role="alert">
        <TriangleAlert className="status-screen__icon" aria-hidden />
        <h1 className="status-screen__title">{t('error.unknown')}</h1>
        <Button variant="secondary" onClick={() => window.location.reload()}>
          <RefreshCw aria-hidden />
          {t('status.retry')}
        </Button>
      </div>
    </div>
  );
}
