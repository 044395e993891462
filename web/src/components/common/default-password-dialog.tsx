import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';

import { Button } from '@/components/ui/button';
import {
  Dialog,
  DialogContent,
  DialogDescription,
  DialogFooter,
  DialogHeader,
  DialogTitle,
} from '@/components/ui/dialog';
import { useDefaultPasswordWarning } from '@/stores/default-password';

/**
 * 您正在使用默认密码！ 请立刻修改默认密码！ — shown after signing in as root with the default
 * password; the primary button leads to the password change on /personal. Mount once in the shell.
 */
export function DefaultPasswordDialog() {
  const { t } = useTranslation('auth');
  const navigate = useNavigate();
  const open = useDefaultPasswordWarning((s) => s.open);
  const close = useDefaultPasswordWarning((s) => s.close);
  return (
    <Dialog open={open} onOpenChange={(next) => (next ? undefined : close())}>
      <DialogContent role="alertdialog">
        <DialogHeader>
          <DialogTitle>{t('defaultPassword.title')}</DialogTitle>
          <DialogDescription>{t('defaultPassword.description')}</DialogDescription>
        </DialogHeader>
        <DialogFooter>
          <Button variant="secondary" onClick={close}>
            {t('defaultPassword.later')}
          </Button>
          <Button
            onClick={() => {
              close();
              void navigate('/personal');
            }}
          >
            {t('defaultPassword.change')}
          </Button>
        </DialogFooter>
      </DialogContent>
    </Dialog>
  );
}
