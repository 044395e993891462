import { Label } from 'radix-ui';
import type { ReactNode } from 'react';

import './field.css';

export interface FieldProps {
  /** The id of the control the label is for. */
  id: string;
  label: ReactNode;
  /** Already translated error text; shown under the control. */
  error?: string;
  hint?: ReactNode;
  children: ReactNode;
}

/** A label, a control, and the control's hint or error. */
export function Field({ id, label, error, hint, children }: FieldProps) {
  return (
    <div data-slot="field" className="ui-field">
      <Label.Root className="ui-field__label" htmlFor={id}>
        {label}
      </Label.Root>
      {children}
      {error ? (
        <p id={`${id}-error`} className="ui-field__error" role="alert">
          {error}
        </p>
      ) : hint ? (
        <p className="ui-field__hint">{hint}</p>
      ) : null}
    </div>
  );
}
