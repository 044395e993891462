import { X } from 'lucide-react';
import { Dialog as DialogPrimitive } from 'radix-ui';
import type { ComponentProps } from 'react';
import { useTranslation } from 'react-i18next';

import { cn } from '@/lib/cn';

import './dialog.css';

export const Dialog = DialogPrimitive.Root;
export const DialogTrigger = DialogPrimitive.Trigger;
export const DialogClose = DialogPrimitive.Close;

export interface DialogContentProps extends ComponentProps<typeof DialogPrimitive.Content> {
  /**
   * `center` is a modal dialog; `left` slides in from the left as a drawer (mobile menu);
   * `right` is a side sheet (editors over a list).
   */
  side?: 'center' | 'left' | 'right';
  /** A `right` sheet's width: 720 px, or 600 px when `narrow` (both full width on a phone). */
  size?: 'default' | 'narrow';
}

export function DialogContent({
  side = 'center',
  size = 'default',
  className,
  children,
  ...props
}: DialogContentProps) {
  const { t } = useTranslation();
  return (
    <DialogPrimitive.Portal>
      <DialogPrimitive.Overlay className="ui-dialog__overlay" />
      <DialogPrimitive.Content
        data-slot="dialog-content"
        data-side={side}
        data-size={size}
        className={cn('ui-dialog', className)}
        {...props}
      >
        {children}
        <DialogPrimitive.Close className="ui-dialog__close" aria-label={t('dialog.close')}>
          <X aria-hidden />
        </DialogPrimitive.Close>
      </DialogPrimitive.Content>
    </DialogPrimitive.Portal>
  );
}

export function DialogHeader({ className, ...props }: ComponentProps<'div'>) {
  return <div className={cn('ui-dialog__header', className)} {...props} />;
}

export function DialogFooter({ className, ...props }: ComponentProps<'div'>) {
  return <div className={cn('ui-dialog__footer', className)} {...props} />;
}

export function DialogTitle({ className, ...props }: ComponentProps<typeof DialogPrimitive.Title>) {
  return <DialogPrimitive.Title className={cn('ui-dialog__title', className)} {...props} />;
}

export function DialogDescription({
  className,
  ...props
}: ComponentProps<typeof DialogPrimitive.Description>) {
  return (
    <DialogPrimitive.Description className={cn('ui-dialog__description', className)} {...props} />
  );
}
