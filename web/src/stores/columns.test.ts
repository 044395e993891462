import { act, renderHook } from '@testing-library/react';
import { describe, expect, it } from 'vitest';

import { columnStorageKeys, loadColumns, useColumns } from './columns';

const spec = {
  table: 'channels',
  columns: ['id', 'name', 'balance'],
  defaults: { id: true, name: true, balance: true },
} as const;

describe('column visibility store', () => {
  it('reads the defaults when nothing or something broken is stored', () => {
    expect(loadColumns(spec)).toEqual(spec.defaults);
    localStorage.setItem(columnStorageKeys.channels, 'not json');
    expect(loadColumns(spec)).toEqual(spec.defaults);
  });

  it('still reads an older list of hidden columns', () => {
    localStorage.setItem(columnStorageKeys.channels, JSON.stringify(['balance', 'unknown']));
    expect(loadColumns(spec)).toEqual({ id: true, name: true, balance: false });
  });

  it('writes every change and a reset back as { column: visible }', () => {
    const { result } = renderHook(() => useColumns(spec));
    act(() => result.current.set({ ...result.current.visible, name: false }));
    expect(result.current.show('name')).toBe(false);
    expect(JSON.parse(localStorage.getItem(columnStorageKeys.channels) ?? '')).toEqual({
      id: true,
      name: false,
      balance: true,
    });
    act(() => result.current.reset());
    expect(result.current.visible).toEqual(spec.defaults);
  });

  it('never turns on a locked column', () => {
    const locked = { ...spec, locked: ['balance'] as const };
    const { result } = renderHook(() => useColumns(locked));
    expect(result.current.show('balance')).toBe(false);
    act(() => result.current.set({ id: true, name: true, balance: true }));
    expect(result.current.show('balance')).toBe(false);
  });
});
