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

import { adminColumns, defaultVisibility, logColumns } from './constants';
import type { Visibility } from './constants';

/** Which columns the log table shows; a non-admin cannot turn on the admin columns. */
export function ColumnsDialog({
  open,
  onOpenChange,
  visible,
  admin,
  onChange,
}: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  visible: Visibility;
  admin: boolean;
  onChange: (visible: Visibility) => void;
}) {
  const { t } = useTranslation('log');
  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent>
        <DialogHeader>
          <DialogTitle>{t('columns.title')}</DialogTitle>
          <DialogDescription>{t('columns.description')}</DialogDescription>
        </DialogHeader>
        <div className="logs__column-list">
          {logColumns.map((column) => {
            const locked = !admin && adminColumns.includes(column);
            return (
              <label key={column} title={locked ? t('columns.adminOnly') : undefined}>
                <input
                  type="checkbox"
                  disabled={locked}
                  checked={visible[column]}
                  onChange={(e) => onChange({ ...visible, [column]: e.target.checked })}
                />
                {t(`column.${column}`)}
              </label>
            );
          })}
        </div>
        <DialogFooter>
          <Button variant="secondary" onClick={() => onChange(defaultVisibility(admin))}>
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
