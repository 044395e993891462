import { useMutation } from '@tanstack/react-query';
import type { ParseKeys } from 'i18next';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';

import { splitList, testChannel } from '@/api/channels';
import type { Channel } from '@/api/channels';
import { localizedMessage } from '@/api/errors';
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
import { Field } from '@/components/ui/field';
import { Input } from '@/components/ui/input';
import { Select } from '@/components/ui/select';
import { formatAmount } from '@/lib/format';
import { toast } from '@/stores/toasts';

import { batchTagSchema } from './schema';

/** Picks one of the channel's models and runs GET /api/channel/test/{id}?model=. */
export function TestDialog({
  channel,
  onClose,
  onTested,
}: {
  channel: Channel | null;
  onClose: () => void;
  onTested: () => void;
}) {
  const { t } = useTranslation('channels');
  const [model, setModel] = useState('');
  const run = useMutation({
    mutationFn: ({ id, model }: { id: number; model: string }) => testChannel(id, model),
    meta: { silent: true },
    onSuccess: (seconds) => {
      toast.success(
        t('test.succeeded', { name: channel?.name ?? '', seconds: formatAmount(seconds) }),
      );
      onTested();
    },
    onError: (error) => {
      toast.error(
        t('test.failed', {
          name: channel?.name ?? '',
          message: localizedMessage(error),
        }),
      );
      onTested();
    },
  });
  const models = channel ? splitList(channel.models) : [];
  return (
    <Dialog
      open={channel !== null}
      onOpenChange={(o) => {
        if (!o) {
          setModel('');
          onClose();
        }
      }}
    >
      <DialogContent>
        <DialogHeader>
          <DialogTitle>{t('test.title', { name: channel?.name ?? '' })}</DialogTitle>
          <DialogDescription>{t('test.description')}</DialogDescription>
        </DialogHeader>
        <Field id="channel-test-model" label={t('field.models')}>
          <Select id="channel-test-model" value={model} onChange={(e) => setModel(e.target.value)}>
            <option value="">
              {t('test.defaultModel')}
              {channel?.test_model ? ` (${channel.test_model})` : ''}
            </option>
            {models.map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
          </Select>
        </Field>
        <DialogFooter>
          <DialogClose asChild>
            <Button variant="secondary">{t('test.cancel')}</Button>
          </DialogClose>
          <Button
            disabled={run.isPending || channel === null}
            onClick={() => channel && run.mutate({ id: channel.id, model })}
          >
            {t('test.run')}
          </Button>
        </DialogFooter>
      </DialogContent>
    </Dialog>
  );
}

/** Bulk tag: POST /api/channel/batch/tag {ids, tag}. */
export function BatchTagDialog({
  open,
  ids,
  onOpenChange,
  onSubmit,
}: {
  open: boolean;
  ids: number[];
  onOpenChange: (open: boolean) => void;
  onSubmit: (tag: string) => void;
}) {
  const { t } = useTranslation('channels');
  const [tag, setTag] = useState('');
  const [error, setError] = useState<string>();
  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent>
        <DialogHeader>
          <DialogTitle>{t('tag.title')}</DialogTitle>
          <DialogDescription>{t('tag.description', { count: ids.length })}</DialogDescription>
        </DialogHeader>
        <form
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            const parsed = batchTagSchema.safeParse({ ids, tag });
            if (!parsed.success) {
              setError(t((parsed.error.issues[0]?.message ?? '') as ParseKeys<'channels'>));
              return;
            }
            setError(undefined);
            setTag('');
            onSubmit(parsed.data.tag);
          }}
        >
          <Field id="batch-tag" label={t('tag.label')} error={error}>
            <Input id="batch-tag" value={tag} onChange={(e) => setTag(e.target.value)} />
          </Field>
          <DialogFooter>
            <DialogClose asChild>
              <Button variant="secondary" type="button">
                {t('tag.cancel')}
              </Button>
            </DialogClose>
            <Button type="submit">{t('tag.submit')}</Button>
          </DialogFooter>
        </form>
      </DialogContent>
    </Dialog>
  );
}
