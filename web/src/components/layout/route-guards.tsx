import { useQuery } from '@tanstack/react-query';
import { RefreshCw, ServerCrash } from 'lucide-react';
import { useTranslation } from 'react-i18next';
import { Navigate, Outlet, useLocation } from 'react-router';

import { ApiError } from '@/api/errors';
import { statusQueryOptions } from '@/api/status';
import { isAdmin } from '@/api/user';
import { Button } from '@/components/ui/button';
import { Spinner } from '@/components/ui/spinner';
import { useSession } from '@/stores/session';

import './route-guards.css';

/** A centered spinner while the status or a page's code loads. */
export function LoadingScreen() {
  const { t } = useTranslation();
  return (
    <div className="status-screen">
      <Spinner className="status-screen__spinner" label={t('app.loading')} />
    </div>
  );
}

/**
 * Loads the system status before anything else renders and applies the setup rule of
 * spec 01 §2: before setup every path leads to /setup; after setup /setup leads to /.
 */
export function StatusGate() {
  const { t } = useTranslation();
  const { pathname } = useLocation();
  const { data: status, error, isFetching, refetch } = useQuery(statusQueryOptions);

  if (!status) {
    if (!error) return <LoadingScreen />;
    const unreachable = error instanceof ApiError && error.kind === 'network';
    return (
      <div className="status-screen">
        <div className="status-screen__card" role="alert">
          <ServerCrash className="status-screen__icon" aria-hidden />
          <h1 className="status-screen__title">
            {unreachable ? t('status.unreachable') : t('status.loadFailed')}
          </h1>
          <Button variant="secondary" onClick={() => void refetch()} disabled={isFetching}>
            <RefreshCw aria-hidden />
            {t('status.retry')}
          </Button>
        </div>
      </div>
    );
  }

  const onSetupPage = pathname === '/setup';
  if (!status.setup && !onSetupPage) return <Navigate to="/setup" replace />;
  if (status.setup && onSetupPage) return <Navigate to="/" replace />;
  return <Outlet />;
}

/** Console pages need a signed-in user; a guest goes to /login (spec 01 §2). */
export function RequireUser() {
  const user = useSession((s) => s.user);
  if (!user) return <Navigate to="/login" replace />;
  return <Outlet />;
}

/** Admin pages (user management): anyone below admin goes home (spec 01 §6). */
export function RequireAdmin() {
  const user = useSession((s) => s.user);
  if (!isAdmin(user)) return <Navigate to="/" replace />;
  return <Outlet />;
}
