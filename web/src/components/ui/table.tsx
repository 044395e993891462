import type { ComponentProps } from 'react';

import { cn } from '@/lib/cn';

import './table.css';

/** A data table in a horizontally scrolling frame. */
export function Table({ className, ...props }: ComponentProps<'table'>) {
  return (
    <div className="ui-table-frame">
      <table data-slot="table" className={cn('ui-table', className)} {...props} />
    </div>
  );
}
