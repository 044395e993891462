import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { QueryKey } from '@tanstack/react-query';

import { toast } from '@/stores/toasts';

/**
 * A list page's mutations: each runs an async step returning the success notice (empty for
 * none), shows it, and refetches the list. Failures go through the query client's handler.
 * `refresh` refetches the list without a mutation (after an editor saved).
 */
export function useListAction(queryKey: QueryKey) {
  const queryClient = useQueryClient();
  const refresh = () => queryClient.invalidateQueries({ queryKey });
  const mutation = useMutation({
    mutationFn: async (run: () => Promise<string>) => run(),
    onSuccess: (text) => {
      if (text) toast.success(text);
      void refresh();
    },
  });
  return { ...mutation, refresh };
}
