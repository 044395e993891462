import type { ComponentProps } from 'react';

import { cn } from '@/lib/cn';

import './badge.css';

export interface BadgeProps extends ComponentProps<'span'> {
  tone?: 'neutral' | 'blue' | 'purple' | 'green' | 'lime' | 'yellow' | 'red' | 'orange';
}

export function Badge({ tone = 'neutral', className, ...props }: BadgeProps) {
  return (
    <span data-slot="badge" data-tone={tone} className={cn('ui-badge', className)} {...props} />
  );
}
