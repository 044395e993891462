import { createBrowserRouter } from 'react-router';
import type { RouteObject } from 'react-router';

import { AppShell } from '@/components/layout/app-shell';
import { PlaceholderPage } from '@/components/layout/placeholder-page';
import type { PageTitle } from '@/components/layout/placeholder-page';
import { RouteError } from '@/components/layout/route-error';
import { LoadingScreen, RequireUser, StatusGate } from '@/components/layout/route-guards';
import type { RouteHandle } from '@/components/layout/route-handle';
import { NotFoundPage } from '@/pages/not-found';

const withoutSidebar: RouteHandle = { sidebar: false };

/** A route whose page is not built yet. */
const placeholder = (path: string, title: PageTitle, handle?: RouteHandle): RouteObject => ({
  path,
  handle,
  element: <PlaceholderPage title={title} />,
});

/** Public pages: no signed-in user needed (spec 01 §2). */
const publicRoutes: RouteObject[] = [
  { index: true, handle: withoutSidebar, element: <PlaceholderPage title="home" /> },
  {
    path: 'setup',
    handle: withoutSidebar,
    lazy: async () => ({ Component: (await import('@/pages/setup')).SetupPage }),
  },
  {
    path: 'login',
    lazy: async () => ({ Component: (await import('@/pages/auth/login-page')).LoginPage }),
  },
  placeholder('register', 'register'),
  placeholder('reset', 'reset'),
  // The password-reset confirm page: opened from the reset mail, so it must stay public.
  placeholder('user/reset', 'resetConfirm'),
  placeholder('oauth/github', 'oauth'),
  placeholder('oauth/oidc', 'oauth'),
  placeholder('oauth/linuxdo', 'oauth'),
  placeholder('pricing', 'pricing'),
  placeholder('docs', 'docs'),
  placeholder('about', 'about'),
  placeholder('chat/:id?', 'chat', withoutSidebar),
  placeholder('chat2link', 'chat', withoutSidebar),
];

/** Console pages: a guest is sent to /login (spec 01 §2). */
const consoleRoutes: RouteObject[] = [
  placeholder('channel', 'channel'),
  placeholder('channel/add', 'channelAdd'),
  placeholder('channel/edit/:id', 'channelEdit'),
  placeholder('token', 'token'),
  placeholder('playground', 'playground'),
  placeholder('redemption', 'redemption'),
  placeholder('user', 'user'),
  placeholder('user/edit', 'userEdit'),
  placeholder('user/edit/:id', 'userEdit'),
  placeholder('setting', 'setting'),
  placeholder('personal', 'personal'),
  placeholder('topup', 'topup'),
  placeholder('log', 'log'),
  placeholder('detail', 'detail'),
  placeholder('midjourney', 'midjourney'),
  placeholder('task', 'task'),
];

/** The route table of spec 01 §2 with its access rules. */
export const routes: RouteObject[] = [
  {
    element: <StatusGate />,
    errorElement: <RouteError />,
    hydrateFallbackElement: <LoadingScreen />,
    children: [
      {
        element: <AppShell />,
        children: [
          ...publicRoutes,
          { element: <RequireUser />, children: consoleRoutes },
          { path: '*', element: <NotFoundPage /> },
        ],
      },
    ],
  },
];

export function createAppRouter() {
  return createBrowserRouter(routes);
}
