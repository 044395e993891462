import { CircleHelp } from 'lucide-react';
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
  DialogTrigger,
} from '@/components/ui/dialog';

import { usageModes } from './schema';

/** The help icon beside the usage mode, opening a dialog that explains the three modes. */
export function UsageModeHelp() {
  const { t } = useTranslation('setup');
  return (
    <Dialog>
      <DialogTrigger asChild>
        <Button
          variant="ghost"
          size="icon"
          className="setup__help"
          aria-label={t('usageMode.help')}
        >
          <CircleHelp aria-hidden />
        </Button>
      </DialogTrigger>
      <DialogContent>
        <DialogHeader>
          <DialogTitle>{t('usageMode.dialog.title')}</DialogTitle>
          <DialogDescription>{t('usageMode.dialog.description')}</DialogDescription>
        </DialogHeader>
        <dl className="setup__modes">
          {usageModes.map((mode) => (
            <div key={mode} className="setup__mode">
              <dt>{t(`usageMode.option.${mode}.label`)}</dt>
              <dd>{t(`usageMode.dialog.${mode}`)}</dd>
            </div>
          ))}
        </dl>
        <DialogFooter>
          <DialogClose asChild>
            <Button>{t('usageMode.dialog.confirm')}</Button>
          </DialogClose>
        </DialogFooter>
      </DialogContent>
    </Dialog>
  );
}
