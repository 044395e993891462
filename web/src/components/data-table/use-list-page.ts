import { useState } from 'react';
import type { FormEvent } from 'react';

import { pageSizes, usePreferences } from '@/stores/preferences';
import type { PageSize } from '@/stores/preferences';

import type { PagerProps } from './pager';

/** What a list page sends with its query: the applied filter plus the page. */
export type ListParams<F> = F & { page: number; pageSize: number };

/**
 * The state every server-paged list page shares: the applied filter and the search form's draft,
 * the page (the size is the stored preference), and the selected row ids. Submitting the form,
 * changing page or size, or applying a filter starts again from page 1 with nothing selected.
 */
export function useListPage<F extends object>(initialFilter: F | (() => F)) {
  const pageSize = usePreferences((s) => s.pageSize);
  const setPageSize = usePreferences((s) => s.setPageSize);
  const [filter, setFilter] = useState<F>(initialFilter);
  const [draft, setDraft] = useState<F>(filter);
  const [page, setPageState] = useState(1);
  const [selected, setSelected] = useState<number[]>([]);

  const restart = () => {
    setPageState(1);
    setSelected([]);
  };
  const apply = (next: F) => {
    setFilter(next);
    setDraft(next);
    restart();
  };

  return {
    filter,
    draft,
    /** Changes some fields of the search form (applied on submit). */
    edit: (patch: Partial<F>) => setDraft((d) => ({ ...d, ...patch })),
    /** The search form's submit handler. */
    submit: (event: FormEvent) => {
      event.preventDefault();
      apply(draft);
    },
    /** Applies a filter at once (forms that keep their own draft). */
    apply,
    /** Back to page 1 with nothing selected (a switch that changes what the list holds). */
    restart,
    params: { ...filter, page, pageSize } as ListParams<F>,
    selected,
    setSelected,
    /** Props for the `Pager` under the list, given the total the server reported. */
    pager: (total: number): PagerProps => ({
      page,
      pageSize,
      total,
      sizes: pageSizes,
      onPage: (p) => {
        setPageState(p);
        setSelected([]);
      },
      onPageSize: (size) => {
        setPageSize(size as PageSize);
        restart();
      },
    }),
  };
}
