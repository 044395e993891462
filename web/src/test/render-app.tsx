import { QueryClientProvider } from '@tanstack/react-query';
import type { QueryClient } from '@tanstack/react-query';
import { render, waitFor } from '@testing-library/react';
import { I18nextProvider } from 'react-i18next';
import { createMemoryRouter, RouterProvider } from 'react-router';

import { Toaster } from '@/components/ui/toaster';
import { i18n } from '@/i18n';
import { createQueryClient } from '@/lib/query-client';
import { routes } from '@/router';

/** The query clients of the apps rendered by the running test. */
const rendered = new Set<QueryClient>();

/**
 * Waits until every app the test rendered has no query or mutation in flight. A call still
 * running when a test ends would land in the next one (the self query stores the user in the
 * shared session store), so the setup waits for them before cleaning up.
 */
export async function settleRenderedApps(): Promise<void> {
  const clients = [...rendered];
  rendered.clear();
  await waitFor(() => {
    for (const client of clients) {
      if (client.isFetching() > 0 || client.isMutating() > 0) throw new Error('calls in flight');
    }
  });
  for (const client of clients) client.clear();
}

/** Renders the whole app (real route table and guards) at `path`. */
export function renderApp(path: string) {
  const router = createMemoryRouter(routes, { initialEntries: [path] });
  const queryClient = createQueryClient();
  rendered.add(queryClient);
  const view = render(
    <I18nextProvider i18n={i18n}>
      <QueryClientProvider client={queryClient}>
        <RouterProvider router={router} />
        <Toaster />
      </QueryClientProvider>
    </I18nextProvider>,
  );
  return { ...view, router, queryClient };
}
