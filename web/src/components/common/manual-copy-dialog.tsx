import { useTranslation } from 'react-i18next';

import {
  Dialog,
  DialogContent,
  DialogDescription,
  DialogHeader,
  DialogTitle,
} from '@/components/ui/dialog';
import { useManualCopy } from '@/stores/manual-copy';

import './manual-copy-dialog.css';

/** Shows text the clipboard refused, selected, for a manual copy. Mount once in the shell. */
export function ManualCopyDialog() {
  const { t } = useTranslation();
  const text = useManualCopy((s) => s.text);
  const close = useManualCopy((s) => s.close);
  return (
    <Dialog open={text !== null} onOpenChange={(open) => (open ? undefined : close())}>
      <DialogContent>
        <DialogHeader>
          <DialogTitle>{t('copy.manual.title')}</DialogTitle>
          <DialogDescription>{t('copy.manual.description')}</DialogDescription>
        </DialogHeader>
        <textarea
          className="manual-copy__text"
          aria-label={t('copy.manual.title')}
          readOnly
          value={text ?? ''}
          onFocus={(event) => event.currentTarget.select()}
          autoFocus
        />
      </DialogContent>
    </Dialog>
  );
}
