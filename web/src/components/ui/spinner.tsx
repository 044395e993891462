import { LoaderCircle } from 'lucide-react';

import { cn } from '@/lib/cn';

import './spinner.css';

export function Spinner({ className, label }: { className?: string; label?: string }) {
  return (
    <LoaderCircle
      data-slot="spinner"
      className={cn('ui-spinner', className)}
      role={label ? 'status' : undefined}
      aria-label={label}
      aria-hidden={label ? undefined : true}
    />
  );
}
