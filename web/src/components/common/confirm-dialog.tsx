import { useState } from 'react';
import { useTranslation } from 'react-i18next';

import { Button } from '@/components/ui/button';
import {
  Dialog,
  DialogClose,
  DialogContent,
  DialogDescription,
  DialogFooter,
  DialogHeader,
  DialogTitle,
} from '@/components/ui/dialog';

/** What a confirmation asks and what it does on yes. */
export interface Confirmation {
  title: string;
  description: string;
  /** The confirm button's text; "确定" unless given. */
  confirmLabel?: string;
  /** A red confirm button (deletions); true unless given. */
  danger?: boolean;
  onConfirm: () => void;
}

export interface ConfirmDialogProps extends Omit<Confirmation, 'onConfirm'> {
  open: boolean;
  onCancel: () => void;
  onConfirm: () => void;
}

/** A yes/no confirmation (deletions and other irreversible actions). */
export function ConfirmDialog({
  open,
  title,
  description,
  confirmLabel,
  danger = true,
  onCancel,
  onConfirm,
}: ConfirmDialogProps) {
  const { t } = useTranslation();
  return (
    <Dialog open={open} onOpenChange={(o) => (o ? undefined : onCancel())}>
      <DialogContent>
        <DialogHeader>
          <DialogTitle>{title}</DialogTitle>
          <DialogDescription>{description}</DialogDescription>
        </DialogHeader>
        <DialogFooter>
          <DialogClose asChild>
            <Button variant="secondary">{t('confirm.cancel')}</Button>
          </DialogClose>
          <Button variant={danger ? 'danger' : 'primary'} onClick={onConfirm}>
            {confirmLabel ?? t('confirm.ok')}
          </Button>
        </DialogFooter>
      </DialogContent>
    </Dialog>
  );
}

/**
 * One confirmation at a time for a page: `ask` opens the dialog with what to confirm;
 * spread `dialog` onto a `ConfirmDialog`. The dialog closes before the action runs.
 */
export function useConfirm() {
  const [asking, setAsking] = useState<Confirmation | null>(null);
  return {
    ask: setAsking,
    dialog: {
      open: asking !== null,
      title: asking?.title ?? '',
      description: asking?.description ?? '',
      confirmLabel: asking?.confirmLabel,
      danger: asking?.danger,
      onCancel: () => setAsking(null),
      onConfirm: () => {
        setAsking(null);
        asking?.onConfirm();
      },
    } satisfies ConfirmDialogProps,
  };
}
