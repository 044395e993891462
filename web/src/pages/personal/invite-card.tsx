import { zodResolver } from '@hookform/resolvers/zod';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ParseKeys } from 'i18next';
import { Copy } from 'lucide-react';
import { useState } from 'react';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';

import { affCodeQueryOptions, selfQueryOptions, transferAffQuota } from '@/api/personal';
import { useStatus } from '@/api/status';
import type { User } from '@/api/user';
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
import { useFormatQuota } from '@/lib/use-format-quota';
import { copyText } from '@/stores/manual-copy';
import { toast } from '@/stores/toasts';

import { transferSchema } from './schema';
import type { TransferValues } from './schema';

/** `{server_address or this origin}/register?aff={code}`. */
export function inviteLink(serverAddress: string, code: string): string {
  const base = (serverAddress || window.location.origin).replace(/\/+$/, '');
  return `${base}/register?aff=${encodeURIComponent(code)}`;
}

/** Invite link, invite counts and earnings, and the earnings transfer. */
export function InviteCard({ user }: { user: User }) {
  const { t } = useTranslation('personal');
  const status = useStatus();
  const formatQuota = useFormatQuota();
  const aff = useQuery(affCodeQueryOptions);
  const [transferring, setTransferring] = useState(false);
  const stats = [
    ['pending', formatQuota(user.aff_quota)],
    ['total', formatQuota(user.aff_history_quota)],
    ['count', String(user.aff_count)],
  ] as const;

  return (
    <Card>
      <CardHeader>
        <CardTitle>{t('invite.title')}</CardTitle>
      </CardHeader>
      <CardContent>
        <div className="personal__form">
          <dl className="personal__stats">
            {stats.map(([key, value]) => (
              <div key={key} className="personal__stat">
                <dt>{t(`invite.stat.${key}`)}</dt>
                <dd>{value}</dd>
              </div>
            ))}
          </dl>
          <Field id="invite-link" label={t('invite.link')}>
            <div className="personal__inline">
              <Input
                id="invite-link"
                readOnly
                value={aff.data ? inviteLink(status.server_address, aff.data) : ''}
              />
              <Button
                variant="secondary"
                disabled={!aff.data}
                onClick={() =>
                  aff.data &&
                  void copyText(inviteLink(status.server_address, aff.data), t('invite.copied'))
                }
              >
                <Copy aria-hidden />
                {t('invite.copy')}
              </Button>
            </div>
          </Field>
          <div className="personal__actions">
            <Button
              variant="secondary"
              disabled={user.aff_quota <= 0}
              onClick={() => setTransferring(true)}
            >
              {t('invite.transfer.open')}
            </Button>
          </div>
        </div>
      </CardContent>
      <TransferDialog
        open={transferring}
        onOpenChange={setTransferring}
        pending={user.aff_quota}
        minimum={status.quota_per_unit}
      />
    </Card>
  );
}

function TransferDialog({
  open,
  onOpenChange,
  pending,
  minimum,
}: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  pending: number;
  minimum: number;
}) {
  const { t } = useTranslation('personal');
  const formatQuota = useFormatQuota();
  const queryClient = useQueryClient();
  const {
    register,
    handleSubmit,
    formState: { errors },
  } = useForm<TransferValues>({
    resolver: zodResolver(transferSchema(minimum)),
    values: { quota: pending },
  });
  const transfer = useMutation({
    mutationFn: ({ quota }: TransferValues) => transferAffQuota(quota),
    onSuccess: () => {
      toast.success(t('invite.transfer.success'));
      void queryClient.invalidateQueries({ queryKey: selfQueryOptions.queryKey });
      onOpenChange(false);
    },
  });
  const error = errors.quota?.message
    ? t(errors.quota.message as ParseKeys<'personal'>, { min: formatQuota(minimum) })
    : undefined;

  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent>
        <DialogHeader>
          <DialogTitle>{t('invite.transfer.title')}</DialogTitle>
          <DialogDescription>
            {t('invite.transfer.description', { pending: formatQuota(pending) })}
          </DialogDescription>
        </DialogHeader>
        <form
          className="personal__form"
          noValidate
          onSubmit={handleSubmit((values) => transfer.mutate(values))}
        >
          <Field
            id="transfer-quota"
            label={t('invite.transfer.amount')}
            hint={t('invite.transfer.hint', { min: formatQuota(minimum) })}
            error={error}
          >
            <Input
              id="transfer-quota"
              type="number"
              step={1}
              {...register('quota', { valueAsNumber: true })}
            />
          </Field>
          <DialogFooter>
            <Button type="submit" disabled={transfer.isPending}>
              {t('invite.transfer.submit')}
            </Button>
          </DialogFooter>
        </form>
      </DialogContent>
    </Dialog>
  );
}
