import { zodResolver } from '@hookform/resolvers/zod';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ParseKeys } from 'i18next';
import { Copy, DatabaseBackup, Trash2 } from 'lucide-react';
import { useState } from 'react';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { z } from 'zod/mini';

import { backupTokensQuery, createBackupToken, revokeBackupToken } from '@/api/backup-tokens';
import type { BackupToken, CreatedBackupToken } from '@/api/backup-tokens';
import { Alert } from '@/components/ui/alert';
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
import { formatTimestamp } from '@/lib/time';
import { copyText } from '@/stores/manual-copy';
import { toast } from '@/stores/toasts';

const codeRequired: ParseKeys<'personal'> = 'twoFactor.codeRequired';
const createSchema = z.object({
  name: z.string().check(z.trim(), z.maxLength(64, 'backupTokens.nameTooLong')),
  code: z.string().check(z.trim(), z.minLength(1, codeRequired)),
});
type CreateValues = z.infer<typeof createSchema>;

/**
 * Root's backup tokens: what `tollgate backup` presents to a running server. Made with a
 * two-factor code, shown once, good for backups only; listed with their last use and revocable.
 */
export function BackupTokensCard() {
  const { t } = useTranslation('personal');
  const queryClient = useQueryClient();
  const tokens = useQuery(backupTokensQuery);
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<CreatedBackupToken | null>(null);
  const revoke = useMutation({
    mutationFn: (token: BackupToken) => revokeBackupToken(token.id),
    onSuccess: () => {
      toast.success(t('backupTokens.revoked'));
      void queryClient.invalidateQueries({ queryKey: backupTokensQuery.queryKey });
    },
  });

  return (
    <Card>
      <CardHeader>
        <CardTitle>{t('backupTokens.title')}</CardTitle>
      </CardHeader>
      <CardContent>
        <div className="personal__form">
          <p>{t('backupTokens.description')}</p>
          {!tokens.data ? (
            <Spinner label={t('loading')} />
          ) : tokens.data.length === 0 ? (
            <p>{t('backupTokens.none')}</p>
          ) : (
            <ul className="personal__tokens" aria-label={t('backupTokens.title')}>
              {tokens.data.map((token) => (
                <li key={token.id} className="personal__inline">
                  <strong>{token.name}</strong>
                  <span>
                    {t('backupTokens.createdAt', { time: formatTimestamp(token.created_at) })}
                  </span>
                  <span>
                    {token.last_used_at
                      ? t('backupTokens.lastUsed', { time: formatTimestamp(token.last_used_at) })
                      : t('backupTokens.neverUsed')}
                  </span>
                  <Button
                    variant="ghost"
                    aria-label={t('backupTokens.revoke', { name: token.name })}
                    disabled={revoke.isPending}
                    onClick={() => revoke.mutate(token)}
                  >
                    <Trash2 aria-hidden />
                  </Button>
                </li>
              ))}
            </ul>
          )}
          <div className="personal__actions">
            <Button variant="secondary" onClick={() => setCreating(true)}>
              <DatabaseBackup aria-hidden />
              {t('backupTokens.create.open')}
            </Button>
          </div>
        </div>
      </CardContent>
      <CreateDialog
        open={creating}
        onOpenChange={setCreating}
        onCreated={(token) => {
          setCreating(false);
          setCreated(token);
        }}
      />
      <CreatedDialog token={created} onClose={() => setCreated(null)} />
    </Card>
  );
}

function CreateDialog({
  open,
  onOpenChange,
  onCreated,
}: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  onCreated: (token: CreatedBackupToken) => void;
}) {
  const { t } = useTranslation('personal');
  const queryClient = useQueryClient();
  const {
    register,
    handleSubmit,
    reset,
    formState: { errors },
  } = useForm<CreateValues>({
    resolver: zodResolver(createSchema),
    defaultValues: { name: '', code: '' },
  });
  const create = useMutation({
    mutationFn: ({ name, code }: CreateValues) => createBackupToken(name, code),
    onSuccess: (token) => {
      reset({ name: '', code: '' });
      void queryClient.invalidateQueries({ queryKey: backupTokensQuery.queryKey });
      onCreated(token);
    },
  });
  const message = (key: string | undefined) => (key ? t(key as ParseKeys<'personal'>) : undefined);
  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent>
        <DialogHeader>
          <DialogTitle>{t('backupTokens.create.title')}</DialogTitle>
          <DialogDescription>{t('backupTokens.create.description')}</DialogDescription>
        </DialogHeader>
        <form
          className="personal__form"
          noValidate
          onSubmit={handleSubmit((values) => create.mutate(values))}
        >
          <Field
            id="backup-token-name"
            label={t('backupTokens.create.name')}
            error={message(errors.name?.message)}
          >
            <Input
              id="backup-token-name"
              autoComplete="off"
              placeholder={t('backupTokens.create.namePlaceholder')}
              {...register('name')}
            />
          </Field>
          <Field
            id="backup-token-code"
            label={t('twoFactor.codeOrRecovery')}
            error={message(errors.code?.message)}
          >
            <Input id="backup-token-code" autoComplete="one-time-code" {...register('code')} />
          </Field>
          <DialogFooter>
            <Button type="submit" disabled={create.isPending}>
              {t('backupTokens.create.submit')}
            </Button>
          </DialogFooter>
        </form>
      </DialogContent>
    </Dialog>
  );
}

/** The new token, shown once. */
function CreatedDialog({
  token,
  onClose,
}: {
  token: CreatedBackupToken | null;
  onClose: () => void;
}) {
  const { t } = useTranslation('personal');
  return (
    <Dialog
      open={token !== null}
      onOpenChange={(open) => {
        if (!open) onClose();
      }}
    >
      <DialogContent>
        <DialogHeader>
          <DialogTitle>{t('backupTokens.created.title')}</DialogTitle>
          <DialogDescription>{t('backupTokens.created.description')}</DialogDescription>
        </DialogHeader>
        <Alert tone="warning">{t('backupTokens.created.once')}</Alert>
        <code className="personal__secret">{token?.token}</code>
        <code className="personal__secret">
          {`tollgate backup FILE --token ${token?.token ?? ''}`}
        </code>
        <DialogFooter>
          <Button
            variant="secondary"
            onClick={() => void copyText(token?.token ?? '', t('backupTokens.created.copied'))}
          >
            <Copy aria-hidden />
            {t('backupTokens.created.copy')}
          </Button>
          <Button onClick={onClose}>{t('backupTokens.created.done')}</Button>
        </DialogFooter>
      </DialogContent>
    </Dialog>
  );
}
