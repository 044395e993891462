import type { ComponentProps } from 'react';

import { cn } from '@/lib/cn';

import './input.css';

/** A native select with the input's look (keyboard and mobile pickers for free). */
export function Select({ className, ...props }: ComponentProps<'select'>) {
  return <select data-slot="select" className={cn('ui-input ui-select', className)} {...props} />;
}
