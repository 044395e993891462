import { useState } from 'react';
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
import { Field } from '@/components/ui/field';
import { Input } from '@/components/ui/input';

import './wechat-code-dialog.css';

/**
 * WeChat sign-in and binding: the official account's QR code (WeChatAccountQRCodeImageURL);
 * the user follows it, sends the keyword, and types the code the account answers (valid three
 * minutes, spec 01 §9).
 */
export function WeChatCodeDialog({
  open,
  onOpenChange,
  qrCode,
  pending,
  onSubmit,
}: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  qrCode: string;
  pending: boolean;
  onSubmit: (code: string) => void;
}) {
  const { t } = useTranslation();
  const [code, setCode] = useState('');
  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent>
        <DialogHeader>
          <DialogTitle>{t('wechat.title')}</DialogTitle>
          <DialogDescription>{t('wechat.description')}</DialogDescription>
        </DialogHeader>
        <form
          className="wechat-code"
          noValidate
          onSubmit={(event) => {
            event.preventDefault();
            if (code.trim()) onSubmit(code.trim());
          }}
        >
          {qrCode ? <img className="wechat-code__qr" src={qrCode} alt={t('wechat.qrAlt')} /> : null}
          <Field id="wechat-code" label={t('wechat.code')}>
            <Input
              id="wechat-code"
              autoComplete="one-time-code"
              value={code}
              onChange={(event) => setCode(event.target.value)}
            />
          </Field>
          <DialogFooter>
            <Button type="submit" disabled={pending || !code.trim()}>
              {t('wechat.submit')}
            </Button>
          </DialogFooter>
        </form>
      </DialogContent>
    </Dialog>
  );
}
