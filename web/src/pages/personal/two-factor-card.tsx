import { zodResolver } from '@hookform/resolvers/zod';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ParseKeys } from 'i18next';
import { Copy, Download, KeyRound, ShieldCheck, ShieldOff } from 'lucide-react';
import { QRCodeSVG } from 'qrcode.react';
import { useState } from 'react';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { z } from 'zod/mini';

import {
  disableTwoFactor,
  enableTwoFactor,
  regenerateRecoveryCodes,
  setupTwoFactor,
  twoFactorStatusQuery,
} from '@/api/two-factor';
import type { TwoFactorSetup } from '@/api/two-factor';
import { Alert } from '@/components/ui/alert';
import { Badge } from '@/components/ui/badge';
import { Button } from '@/components/ui/button';
import { Card, CardContent, CardHeader, CardTitle } from '@/components/ui/card';
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
import { Spinner } from '@/components/ui/spinner';
import { codesFile, downloadText } from '@/pages/redemptions/schema';
import { copyText } from '@/stores/manual-copy';
import { toast } from '@/stores/toasts';

const required: ParseKeys<'personal'> = 'twoFactor.codeRequired';

/** A form asking for one code (a current code from the app, or a recovery code). */
const codeSchema = z.object({ code: z.string().check(z.trim(), z.minLength(1, required)) });
type CodeValues = z.infer<typeof codeSchema>;

/**
 * Two-factor sign-in (TOTP): its state, turning it on (QR code and secret, confirmed with a
 * code, then the recovery codes shown once), new recovery codes and turning it off, each with
 * a code. Turning it on or off signs the account out everywhere else (the server ends the
 * other sessions).
 */
export function TwoFactorCard() {
  const { t } = useTranslation('personal');
  const status = useQuery(twoFactorStatusQuery);
  const [setup, setSetup] = useState<TwoFactorSetup | null>(null);
  const [codes, setCodes] = useState<string[] | null>(null);
  const [dialog, setDialog] = useState<'disable' | 'regenerate' | null>(null);
  const [confirming, setConfirming] = useState(false);

  return (
    <Card>
      <CardHeader>
        <CardTitle>{t('twoFactor.title')}</CardTitle>
      </CardHeader>
      <CardContent>
        {!status.data ? (
          <Spinner label={t('loading')} />
        ) : status.data.enabled ? (
          <div className="personal__form">
            <p className="personal__inline">
              <Badge tone="green">{t('twoFactor.on')}</Badge>
              <span>{t('twoFactor.remaining', { count: status.data.backup_codes_remaining })}</span>
            </p>
            <div className="personal__actions">
              <Button variant="secondary" onClick={() => setDialog('regenerate')}>
                <KeyRound aria-hidden />
                {t('twoFactor.regenerate.open')}
              </Button>
              <Button variant="danger" onClick={() => setDialog('disable')}>
                <ShieldOff aria-hidden />
                {t('twoFactor.disable.open')}
              </Button>
            </div>
          </div>
        ) : setup ? (
          <EnableForm
            setup={setup}
            onEnabled={(issued) => {
              setSetup(null);
              setCodes(issued);
            }}
            onCancel={() => setSetup(null)}
          />
        ) : (
          <div className="personal__form">
            <p>{t('twoFactor.off')}</p>
            <div className="personal__actions">
              <Button onClick={() => setConfirming(true)}>
                <ShieldCheck aria-hidden />
                {t('twoFactor.start')}
              </Button>
            </div>
          </div>
        )}
      </CardContent>
      <CodeDialog
        kind={dialog}
        onOpenChange={(open) => {
          if (!open) setDialog(null);
        }}
        onRegenerated={(issued) => {
          setDialog(null);
          setCodes(issued);
        }}
      />
      <RecoveryCodesDialog codes={codes} onClose={() => setCodes(null)} />
      <PasswordDialog
        open={confirming}
        onOpenChange={setConfirming}
        onSetup={(started) => {
          setConfirming(false);
          setSetup(started);
        }}
      />
    </Card>
  );
}

/**
 * Starting the setup asks for the password again; an account made by third-party sign-up has
 * none and leaves it empty (it must have signed in within the last 5 minutes).
 */
function PasswordDialog({
  open,
  onOpenChange,
  onSetup,
}: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  onSetup: (setup: TwoFactorSetup) => void;
}) {
  const { t } = useTranslation('personal');
  const { register, handleSubmit, reset } = useForm<{ password: string }>({
    defaultValues: { password: '' },
  });
  const start = useMutation({
    mutationFn: ({ password }: { password: string }) => setupTwoFactor(password),
    onSuccess: (started) => {
      reset({ password: '' });
      onSetup(started);
    },
  });
  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent>
        <DialogHeader>
          <DialogTitle>{t('twoFactor.confirm.title')}</DialogTitle>
          <DialogDescription>{t('twoFactor.confirm.description')}</DialogDescription>
        </DialogHeader>
        <form
          className="personal__form"
          noValidate
          onSubmit={handleSubmit((values) => start.mutate(values))}
        >
          <Field
            id="two-factor-password"
            label={t('twoFactor.confirm.password')}
            hint={t('twoFactor.confirm.hint')}
          >
            <Input
              id="two-factor-password"
              type="password"
              autoComplete="current-password"
              {...register('password')}
            />
          </Field>
          <DialogFooter>
            <Button type="submit" disabled={start.isPending}>
              {t('twoFactor.confirm.submit')}
            </Button>
          </DialogFooter>
        </form>
      </DialogContent>
    </Dialog>
  );
}

/** Step two of turning it on: scan (or type) the secret, then confirm with a code. */
function EnableForm({
  setup,
  onEnabled,
  onCancel,
}: {
  setup: TwoFactorSetup;
  onEnabled: (codes: string[]) => void;
  onCancel: () => void;
}) {
  const { t } = useTranslation('personal');
  const queryClient = useQueryClient();
  const {
    register,
    handleSubmit,
    formState: { errors },
  } = useForm<CodeValues>({ resolver: zodResolver(codeSchema), defaultValues: { code: '' } });
  const enable = useMutation({
    mutationFn: ({ code }: CodeValues) => enableTwoFactor(code),
    onSuccess: (issued) => {
      toast.success(t('twoFactor.enabled'));
      void queryClient.invalidateQueries({ queryKey: twoFactorStatusQuery.queryKey });
      onEnabled(issued);
    },
  });
  const error = errors.code?.message;
  return (
    <form
      className="personal__form"
      noValidate
      aria-label={t('twoFactor.setup.title')}
      onSubmit={handleSubmit((values) => enable.mutate(values))}
    >
      <p>{t('twoFactor.setup.scan')}</p>
      <div className="personal__qr">
        <QRCodeSVG
          value={setup.qr_code_data}
          size={176}
          marginSize={2}
          title={t('twoFactor.setup.qr')}
        />
      </div>
      <Field
        id="two-factor-secret"
        label={t('twoFactor.setup.secret')}
        hint={t('twoFactor.setup.secretHint')}
      >
        <code id="two-factor-secret" className="personal__secret">
          {setup.secret}
        </code>
      </Field>
      <Field
        id="two-factor-enable-code"
        label={t('twoFactor.code')}
        error={error ? t(error as ParseKeys<'personal'>) : undefined}
      >
        <Input
          id="two-factor-enable-code"
          autoComplete="one-time-code"
          inputMode="numeric"
          {...register('code')}
        />
      </Field>
      <div className="personal__actions">
        <Button type="submit" disabled={enable.isPending}>
          {t('twoFactor.setup.submit')}
        </Button>
        <Button type="button" variant="ghost" onClick={onCancel}>
          {t('twoFactor.cancel')}
        </Button>
      </div>
    </form>
  );
}

/** Turning it off, or new recovery codes: both ask for a code. */
function CodeDialog({
  kind,
  onOpenChange,
  onRegenerated,
}: {
  kind: 'disable' | 'regenerate' | null;
  onOpenChange: (open: boolean) => void;
  onRegenerated: (codes: string[]) => void;
}) {
  const { t } = useTranslation('personal');
  const queryClient = useQueryClient();
  const {
    register,
    handleSubmit,
    reset,
    formState: { errors },
  } = useForm<CodeValues>({ resolver: zodResolver(codeSchema), defaultValues: { code: '' } });
  const act = useMutation({
    mutationFn: async ({ code }: CodeValues) =>
      kind === 'disable' ? (await disableTwoFactor(code), null) : regenerateRecoveryCodes(code),
    onSuccess: (issued) => {
      reset({ code: '' });
      void queryClient.invalidateQueries({ queryKey: twoFactorStatusQuery.queryKey });
      if (issued) {
        onRegenerated(issued);
      } else {
        toast.success(t('twoFactor.disable.done'));
        onOpenChange(false);
      }
    },
  });
  const error = errors.code?.message;
  const which = kind ?? 'disable';
  return (
    <Dialog open={kind !== null} onOpenChange={onOpenChange}>
      <DialogContent>
        <DialogHeader>
          <DialogTitle>{t(`twoFactor.${which}.title`)}</DialogTitle>
          <DialogDescription>{t(`twoFactor.${which}.description`)}</DialogDescription>
        </DialogHeader>
        <form
          className="personal__form"
          noValidate
          onSubmit={handleSubmit((values) => act.mutate(values))}
        >
          <Field
            id="two-factor-dialog-code"
            label={t('twoFactor.codeOrRecovery')}
            error={error ? t(error as ParseKeys<'personal'>) : undefined}
          >
            <Input id="two-factor-dialog-code" autoComplete="one-time-code" {...register('code')} />
          </Field>
          <DialogFooter>
            <Button
              type="submit"
              variant={which === 'disable' ? 'danger' : 'primary'}
              disabled={act.isPending}
            >
              {t(`twoFactor.${which}.submit`)}
            </Button>
          </DialogFooter>
        </form>
      </DialogContent>
    </Dialog>
  );
}

/** The recovery codes, shown once: copy or download them now. */
function RecoveryCodesDialog({ codes, onClose }: { codes: string[] | null; onClose: () => void }) {
  const { t } = useTranslation('personal');
  const text = codes ? codesFile(codes) : '';
  return (
    <Dialog
      open={codes !== null}
      onOpenChange={(open) => {
        if (!open) onClose();
      }}
    >
      <DialogContent>
        <DialogHeader>
          <DialogTitle>{t('twoFactor.codes.title')}</DialogTitle>
          <DialogDescription>{t('twoFactor.codes.description')}</DialogDescription>
        </DialogHeader>
        <Alert tone="warning">{t('twoFactor.codes.once')}</Alert>
        <ul className="personal__codes" aria-label={t('twoFactor.codes.title')}>
          {(codes ?? []).map((code) => (
            <li key={code}>
              <code>{code}</code>
            </li>
          ))}
        </ul>
        <DialogFooter>
          <Button
            variant="secondary"
            onClick={() => void copyText(text, t('twoFactor.codes.copied'))}
          >
            <Copy aria-hidden />
            {t('twoFactor.codes.copy')}
          </Button>
          <Button variant="secondary" onClick={() => downloadText('recovery-codes.txt', text)}>
            <Download aria-hidden />
            {t('twoFactor.codes.download')}
          </Button>
          <Button onClick={onClose}>{t('twoFactor.codes.done')}</Button>
        </DialogFooter>
      </DialogContent>
    </Dialog>
  );
}
