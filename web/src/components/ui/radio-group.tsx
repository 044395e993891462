import { RadioGroup as RadioPrimitive } from 'radix-ui';
import type { ComponentProps, ReactNode } from 'react';

import { cn } from '@/lib/cn';

import './radio-group.css';

export function RadioGroup({ className, ...props }: ComponentProps<typeof RadioPrimitive.Root>) {
  return <RadioPrimitive.Root className={cn('ui-radio-group', className)} {...props} />;
}

export interface RadioCardProps extends ComponentProps<typeof RadioPrimitive.Item> {
  label: ReactNode;
  description?: ReactNode;
}

/** A radio option drawn as a selectable card with a label and a description. */
export function RadioCard({ id, label, description, className, ...props }: RadioCardProps) {
  return (
    <label className={cn('ui-radio-card', className)} htmlFor={id}>
      <RadioPrimitive.Item id={id} className="ui-radio-card__control" {...props}>
        <RadioPrimitive.Indicator className="ui-radio-card__dot" />
      </RadioPrimitive.Item>
      <span className="ui-radio-card__text">
        <span className="ui-radio-card__label">{label}</span>
        {description ? <span className="ui-radio-card__description">{description}</span> : null}
      </span>
    </label>
  );
}
