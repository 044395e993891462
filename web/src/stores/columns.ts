import { useState } from 'react';

/** The tables whose column choices are kept, with their local storage keys (spec 02 §9). */
export const columnStorageKeys = {
  channels: 'channels-table-columns',
  logs: 'logs-table-columns',
} as const;
export type ColumnTable = keyof typeof columnStorageKeys;

export type Visibility<C extends string> = Record<C, boolean>;

export interface ColumnSpec<C extends string> {
  table: ColumnTable;
  columns: readonly C[];
  /** Which columns show when nothing is stored (or after a reset). */
  defaults: Visibility<C>;
  /** Columns that stay hidden whatever is stored (a non-admin's admin columns). */
  locked?: readonly C[];
}

/**
 * The stored choices over the defaults, stored as `{ column: visible }`. An older list of hidden
 * columns (`["balance"]`) still reads; anything broken reads as the defaults.
 */
export function loadColumns<C extends string>({
  table,
  columns,
  defaults,
  locked = [],
}: ColumnSpec<C>): Visibility<C> {
  const visible = { ...defaults };
  try {
    const stored: unknown = JSON.parse(localStorage.getItem(columnStorageKeys[table]) ?? '{}');
    if (Array.isArray(stored)) {
      for (const column of columns) if (stored.includes(column)) visible[column] = false;
    } else if (typeof stored === 'object' && stored !== null) {
      for (const column of columns) {
        const value = (stored as Record<string, unknown>)[column];
        if (typeof value === 'boolean') visible[column] = value;
      }
    }
  } catch {
    // A broken value reads as the defaults.
  }
  for (const column of locked) visible[column] = false;
  return visible;
}

export function saveColumns<C extends string>(table: ColumnTable, visible: Visibility<C>): void {
  localStorage.setItem(columnStorageKeys[table], JSON.stringify(visible));
}

/** A table's column visibility, read once from local storage and written back on each change. */
export function useColumns<C extends string>(spec: ColumnSpec<C>) {
  const [visible, setVisibleState] = useState<Visibility<C>>(() => loadColumns(spec));
  const set = (next: Visibility<C>) => {
    const kept = { ...next };
    for (const column of spec.locked ?? []) kept[column] = false;
    setVisibleState(kept);
    saveColumns(spec.table, kept);
  };
  return {
    visible,
    show: (column: C) => visible[column],
    set,
    reset: () => set(spec.defaults),
  };
}
