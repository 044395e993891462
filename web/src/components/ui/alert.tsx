import { CircleAlert, CircleCheck, Info, TriangleAlert } from 'lucide-react';
import type { ComponentProps, ReactNode } from 'react';

import { cn } from '@/lib/cn';

import './alert.css';

const icons = {
  info: Info,
  success: CircleCheck,
  warning: TriangleAlert,
  danger: CircleAlert,
};

export interface AlertProps extends Omit<ComponentProps<'div'>, 'title'> {
  tone?: keyof typeof icons;
  title?: ReactNode;
}

/** An inline message; `danger` is announced as an alert, the others as a status. */
export function Alert({ tone = 'info', title, className, children, ...props }: AlertProps) {
  const Icon = icons[tone];
  return (
    <div
      data-slot="alert"
      data-tone={tone}
      role={tone === 'danger' ? 'alert' : 'status'}
      className={cn('ui-alert', className)}
      {...props}
    >
      <Icon className="ui-alert__icon" aria-hidden />
      <div className="ui-alert__body">
        {title ? <p className="ui-alert__title">{title}</p> : null}
        {children}
      </div>
    </div>
  );
}
