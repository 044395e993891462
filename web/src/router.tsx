import { createBrowserRouter, Navigate } from 'react-router';
import type { RouteObject } from 'react-router';

import { AppShell } from '@/components/layout/app-shell';
import { RouteError } from '@/components/layout/route-error';
import {
  LoadingScreen,
  RequireAdmin,
  RequireUser,
  StatusGate,
} from '@/components/layout/route-guards';
import type { RouteHandle } from '@/components/layout/route-handle';
import { NotFoundPage } from '@/pages/not-found';

const withoutSidebar: RouteHandle = { sidebar: false };

/** Public pages: no signed-in user needed (spec 01 §2). */
const publicRoutes: RouteObject[] = [
  {
    index: true,
    handle: withoutSidebar,
    lazy: async () => ({ Component: (await import('@/pages/home')).HomePage }),
  },
  {
    path: 'setup',
    handle: withoutSidebar,
    lazy: async () => ({ Component: (await import('@/pages/setup')).SetupPage }),
  },
  {
    path: 'login',
    lazy: async () => ({ Component: (await import('@/pages/auth/login-page')).LoginPage }),
  },
  {
    path: 'login/2fa',
    lazy: async () => ({
      Component: (await import('@/pages/auth/two-factor-login-page')).TwoFactorLoginPage,
    }),
  },
  {
    path: 'register',
    lazy: async () => ({ Component: (await import('@/pages/auth/register-page')).RegisterPage }),
  },
  {
    path: 'reset',
    lazy: async () => ({ Component: (await import('@/pages/auth/reset-page')).ResetPage }),
  },
  // The password-reset confirm page: opened from the reset mail, so it must stay public.
  {
    path: 'user/reset',
    lazy: async () => ({
      Component: (await import('@/pages/auth/reset-confirm-page')).ResetConfirmPage,
    }),
  },
  ...(['github', 'oidc', 'linuxdo'] as const).map((provider): RouteObject => ({
    path: `oauth/${provider}`,
    lazy: async () => {
      const { OAuthCallbackPage } = await import('@/pages/auth/oauth-callback-page');
      return { element: <OAuthCallbackPage provider={provider} /> };
    },
  })),
  {
    path: 'pricing',
    lazy: async () => ({ Component: (await import('@/pages/pricing')).PricingPage }),
  },
  {
    path: 'docs',
    lazy: async () => ({ Component: (await import('@/pages/content/docs-page')).DocsPage }),
  },
  {
    path: 'about',
    lazy: async () => ({ Component: (await import('@/pages/content/about-page')).AboutPage }),
  },
  {
    path: 'chat/:id?',
    handle: withoutSidebar,
    lazy: async () => ({ Component: (await import('@/pages/content/chat-page')).ChatPage }),
  },
  {
    path: 'chat2link',
    handle: withoutSidebar,
    lazy: async () => ({ Component: (await import('@/pages/content/chat-page')).ChatToLinkPage }),
  },
];

/** Console pages: a guest is sent to /login (spec 01 §2). */
const consoleRoutes: RouteObject[] = [
  {
    path: 'token',
    lazy: async () => ({ Component: (await import('@/pages/tokens')).TokensPage }),
  },
  {
    path: 'playground',
    lazy: async () => ({ Component: (await import('@/pages/playground')).PlaygroundPage }),
  },
  {
    element: <RequireAdmin />,
    children: [
      {
        // /channel/add and /channel/edit/:id open the editor drawer over the list.
        path: 'channel',
        lazy: async () => ({ Component: (await import('@/pages/channels')).ChannelsPage }),
        children: [
          { path: 'add', element: null },
          { path: 'edit/:id', element: null },
        ],
      },
      {
        path: 'redemption',
        lazy: async () => ({ Component: (await import('@/pages/redemptions')).RedemptionsPage }),
      },
      {
        path: 'user',
        lazy: async () => ({ Component: (await import('@/pages/users')).UsersPage }),
      },
      {
        path: 'setting',
        lazy: async () => ({ Component: (await import('@/pages/settings')).SettingsPage }),
      },
      {
        // Root only: the server refuses anyone else (403), the menu shows it to root alone.
        path: 'audit',
        lazy: async () => ({ Component: (await import('@/pages/audit')).AuditPage }),
      },
      {
        path: 'user/edit/:id',
        lazy: async () => ({
          Component: (await import('@/pages/users/user-edit-page')).UserEditPage,
        }),
      },
    ],
  },
  // Without an id the form is the user's own profile, which lives on /personal.
  { path: 'user/edit', element: <Navigate to="/personal" replace /> },
  {
    path: 'personal',
    lazy: async () => ({ Component: (await import('@/pages/personal')).PersonalPage }),
  },
  {
    path: 'topup',
    lazy: async () => ({ Component: (await import('@/pages/topup')).TopUpPage }),
  },
  { path: 'log', lazy: async () => ({ Component: (await import('@/pages/logs')).LogsPage }) },
  {
    path: 'detail',
    lazy: async () => ({ Component: (await import('@/pages/detail')).DetailPage }),
  },
  {
    path: 'midjourney',
    lazy: async () => ({ Component: (await import('@/pages/tasks/drawing-page')).DrawingPage }),
  },
  {
    path: 'task',
    lazy: async () => ({ Component: (await import('@/pages/tasks/music-page')).MusicPage }),
  },
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
