import '@/styles/tokens.css';
import '@/styles/base.css';

import { QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { I18nextProvider } from 'react-i18next';
import { RouterProvider } from 'react-router/dom';

import { Toaster } from '@/components/ui/toaster';
import { i18n } from '@/i18n';
import { createQueryClient } from '@/lib/query-client';
import { syncPreferences } from '@/lib/sync-preferences';
import { createAppRouter } from '@/router';

syncPreferences();
const queryClient = createQueryClient();
const router = createAppRouter();

createRoot(document.getElementById('root') as HTMLElement).render(
  <StrictMode>
    <I18nextProvider i18n={i18n}>
      <QueryClientProvider client={queryClient}>
        <RouterProvider router={router} />
        <Toaster />
      </QueryClientProvider>
    </I18nextProvider>
  </StrictMode>,
);
