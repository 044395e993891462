import { act, renderHook } from '@testing-library/react';
import type { FormEvent } from 'react';
import { describe, expect, it } from 'vitest';

import { usePreferences } from '@/stores/preferences';

import { useListPage } from './use-list-page';

const submitEvent = { preventDefault: () => undefined } as FormEvent;

describe('useListPage', () => {
  it('applies the draft on submit and starts again from page 1 with nothing selected', () => {
    const { result } = renderHook(() => useListPage({ keyword: '' }));
    act(() => result.current.pager(100).onPage(3));
    act(() => result.current.setSelected([1, 2]));
    act(() => result.current.edit({ keyword: 'abc' }));
    expect(result.current.params).toMatchObject({ keyword: '', page: 3 });
    act(() => result.current.submit(submitEvent));
    expect(result.current.params).toMatchObject({ keyword: 'abc', page: 1 });
    expect(result.current.selected).toEqual([]);
  });

  it('keeps the page size as the stored preference and resets the page on change', () => {
    const { result } = renderHook(() => useListPage({}));
    act(() => result.current.pager(100).onPage(2));
    act(() => result.current.pager(100).onPageSize(50));
    expect(result.current.params).toMatchObject({ page: 1, pageSize: 50 });
    expect(usePreferences.getState().pageSize).toBe(50);
    act(() => usePreferences.getState().setPageSize(10));
  });

  it('changing page clears the selection', () => {
    const { result } = renderHook(() => useListPage({}));
    act(() => result.current.setSelected([4]));
    act(() => result.current.pager(100).onPage(2));
    expect(result.current.selected).toEqual([]);
  });
});
