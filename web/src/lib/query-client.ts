import { MutationCache, QueryCache, QueryClient } from '@tanstack/react-query';

import { ApiError, notifyApiError } from '@/api/errors';

/** Per-query and per-mutation options read by the global error handling. */
interface AppMeta extends Record<string, unknown> {
  /** The caller shows this call's errors itself; skip the generic toast. */
  silent?: boolean;
}

declare module '@tanstack/react-query' {
  interface Register {
    queryMeta: AppMeta;
    mutationMeta: AppMeta;
  }
}

/** Only a lost connection is worth one automatic retry; the server's answers are final. */
function retryOnce(failureCount: number, error: unknown): boolean {
  return failureCount < 1 && error instanceof ApiError && error.kind === 'network';
}

/** The app's QueryClient: failed calls go through the generic handling of spec 01 §8 here. */
export function createQueryClient(): QueryClient {
  return new QueryClient({
    queryCache: new QueryCache({
      onError: (error, query) => {
        if (!query.meta?.silent) notifyApiError(error);
      },
    }),
    mutationCache: new MutationCache({
      onError: (error, _variables, _context, mutation) => {
        if (!mutation.meta?.silent) notifyApiError(error);
      },
    }),
    defaultOptions: {
      queries: { retry: retryOnce, refetchOnWindowFocus: false },
      mutations: { retry: false },
    },
  });
}
