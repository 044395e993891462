import { Tooltip as TooltipPrimitive } from 'radix-ui';
import type { ReactNode } from 'react';

import './tooltip.css';

export const TooltipProvider = TooltipPrimitive.Provider;

export interface TooltipProps {
  content: ReactNode;
  side?: 'top' | 'right' | 'bottom' | 'left';
  /** When false the trigger is rendered without a tooltip. */
  enabled?: boolean;
  children: ReactNode;
}

/** A hover/focus hint for its single child; needs a TooltipProvider above it. */
export function Tooltip({ content, side = 'right', enabled = true, children }: TooltipProps) {
  if (!enabled) return children;
  return (
    <TooltipPrimitive.Root>
      <TooltipPrimitive.Trigger asChild>{children}</TooltipPrimitive.Trigger>
      <TooltipPrimitive.Portal>
        <TooltipPrimitive.Content className="ui-tooltip" side={side} sideOffset={8}>
          {content}
        </TooltipPrimitive.Content>
      </TooltipPrimitive.Portal>
    </TooltipPrimitive.Root>
  );
}
