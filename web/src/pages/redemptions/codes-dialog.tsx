import { Copy, Download } from 'lucide-react';
import { useTranslation } from 'react-i18next';

import { Button } from '@/components/ui/button';
import {
  Dialog,
  DialogContent,
  DialogDescription,
  DialogFooter,
  DialogHeader,
  DialogTitle,
} from '@/components/ui/dialog';
import { copyText } from '@/stores/manual-copy';

import { codesFile, downloadText } from './schema';

/** After creation: the new codes, offered as `<name>.txt` and for copying. */
export function CodesDialog({
  created,
  onClose,
}: {
  created: { name: string; codes: string[] } | null;
  onClose: () => void;
}) {
  const { t } = useTranslation('redemption');
  const text = created ? codesFile(created.codes) : '';
  return (
    <Dialog open={created !== null} onOpenChange={(open) => (open ? undefined : onClose())}>
      <DialogContent>
        <DialogHeader>
          <DialogTitle>{t('created.title')}</DialogTitle>
          <DialogDescription>
            {t('created.description', { count: created?.codes.length ?? 0 })}
          </DialogDescription>
        </DialogHeader>
        <textarea
          className="ui-input redemption__codes"
          aria-label={t('created.codes')}
          readOnly
          rows={Math.min(10, created?.codes.length ?? 1)}
          value={text.trimEnd()}
        />
        <DialogFooter>
          <Button
            variant="secondary"
            onClick={() => void copyText(text.trimEnd(), t('toast.copied'))}
          >
            <Copy aria-hidden />
            {t('created.copy')}
          </Button>
          <Button
            onClick={() => {
              if (created) downloadText(`${created.name}.txt`, text);
              onClose();
            }}
          >
            <Download aria-hidden />
            {t('created.download')}
          </Button>
        </DialogFooter>
      </DialogContent>
    </Dialog>
  );
}
