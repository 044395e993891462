import type { UseQueryResult } from '@tanstack/react-query';
import type { ReactNode } from 'react';

import { Alert } from '@/components/ui/alert';
import { Spinner } from '@/components/ui/spinner';

export interface ListBodyProps<D> {
  query: Pick<UseQueryResult<D>, 'data' | 'isError'>;
  /** The spinner's accessible label. */
  loading: string;
  /** Shown when the first load failed (a failed refetch keeps the old rows). */
  failed: string;
  children: (data: D) => ReactNode;
}

/** The loading and load-failure states of a list, then the list itself. */
export function ListBody<D>({ query, loading, failed, children }: ListBodyProps<D>) {
  if (query.data !== undefined) return children(query.data);
  if (query.isError) return <Alert tone="danger">{failed}</Alert>;
  return <Spinner label={loading} />;
}
