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
import type { Visibility } from '@/stores/columns';

export interface ColumnsDialogProps<C extends string> {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  columns: readonly C[];
  visible: Visibility<C>;
  onChange: (visible: Visibility<C>) => void;
  onReset: () => void;
  /** A column's header text. */
  label: (column: C) => string;
  /** Why a column cannot be turned on, for columns that cannot; undefined otherwise. */
  lockedReason?: (column: C) => string | undefined;
}

/** Column settings: which columns a table shows (kept by `useColumns`). */
export function ColumnsDialog<C extends string>({
  open,
  onOpenChange,
  columns,
  visible,
  onChange,
  onReset,
  label,
  lockedReason,
}: ColumnsDialogProps<C>) {
  const { t } = useTranslation();
  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent>
        <DialogHeader>
          <DialogTitle>{t('columns.title')}</DialogTitle>
          <DialogDescription>{t('columns.description')}</DialogDescription>
        </DialogHeader>
        <div className="data-columns">
          {columns.map((column) => {
            const locked = lockedReason?.(column);
            return (
              <label key={column} title={locked}>
                <input
                  type="checkbox"
                  disabled={locked !== undefined}
                  checked={visible[column]}
                  onChange={(e) => onChange({ ...visible, [column]: e.target.checked })}
                />
                {label(column)}
              </label>
            );
          })}
        </div>
        <DialogFooter>
          <Button variant="secondary" onClick={onReset}>
            {t('columns.reset')}
          </Button>
          <DialogClose asChild>
            <Button>{t('columns.done')}</Button>
          </DialogClose>
        </DialogFooter>
      </DialogContent>
    </Dialog>
  );
}
