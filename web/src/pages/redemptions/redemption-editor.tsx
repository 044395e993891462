import { zodResolver } from '@hookform/resolvers/zod';
import { useMutation, useQuery } from '@tanstack/react-query';
import type { ParseKeys } from 'i18next';
import { useForm, useWatch } from 'react-hook-form';
import { useTranslation } from 'react-i18next';

import { createRedemptions, redemptionQueryOptions, updateRedemption } from '@/api/redemptions';
import type { Redemption } from '@/api/redemptions';
import { useStatus } from '@/api/status';
import { Alert } from '@/components/ui/alert';
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
import { Spinner } from '@/components/ui/spinner';
import { formatQuota } from '@/lib/format';
import { useFormatQuota } from '@/lib/use-format-quota';
import { toast } from '@/stores/toasts';

import { newRedemptionValues, QUOTA_PRESETS, redemptionFormSchema } from './schema';
import type { RedemptionFormValues } from './schema';

export interface RedemptionEditorProps {
  open: boolean;
  /** The code to edit; null creates new ones. */
  id: number | null;
  onOpenChange: (open: boolean) => void;
  /** After a save: the created codes and their name (empty after an edit). */
  onSaved: (created: { name: string; codes: string[] }) => void;
}

/** The create/edit side drawer for redemption codes. */
export function RedemptionEditor({ open, id, onOpenChange, onSaved }: RedemptionEditorProps) {
  const { t } = useTranslation('redemption');
  const code = useQuery({ ...redemptionQueryOptions(id ?? 0), enabled: id !== null && open });
  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent side="right" size="narrow">
        <DialogHeader>
          <DialogTitle>{id === null ? t('editor.addTitle') : t('editor.editTitle')}</DialogTitle>
          <DialogDescription>{t('editor.description')}</DialogDescription>
        </DialogHeader>
        {id === null ? (
          <CodeForm key="new" onSaved={onSaved} onCancel={() => onOpenChange(false)} />
        ) : code.isError && !code.data ? (
          <Alert tone="danger">{t('editor.loadFailed')}</Alert>
        ) : !code.data ? (
          <Spinner label={t('list.loading')} />
        ) : (
          <CodeForm
            key={code.data.id}
            code={code.data}
            onSaved={onSaved}
            onCancel={() => onOpenChange(false)}
          />
        )}
      </DialogContent>
    </Dialog>
  );
}

function CodeForm({
  code,
  onSaved,
  onCancel,
}: {
  code?: Redemption;
  onSaved: RedemptionEditorProps['onSaved'];
  onCancel: () => void;
}) {
  const { t } = useTranslation('redemption');
  const status = useStatus();
  const formatAmount = useFormatQuota();
  const creating = code === undefined;
  const {
    register,
    handleSubmit,
    control,
    setValue,
    formState: { errors },
  } = useForm<RedemptionFormValues>({
    resolver: zodResolver(redemptionFormSchema(creating)),
    defaultValues: code ? { name: code.name, quota: code.quota, count: 1 } : newRedemptionValues,
  });
  const quota = useWatch({ control, name: 'quota' });
  const message = (key: string | undefined) =>
    key ? t(key as ParseKeys<'redemption'>) : undefined;

  const save = useMutation({
    mutationFn: async (values: RedemptionFormValues) => {
      if (!creating) {
        await updateRedemption({ id: code.id, name: values.name, quota: values.quota });
        return { name: values.name, codes: [] };
      }
      // An empty name on create becomes the formatted quota (spec 02 §5).
      const name = values.name || formatAmount(values.quota);
      const codes = await createRedemptions({ name, quota: values.quota, count: values.count });
      return { name, codes };
    },
    onSuccess: (result) => {
      toast.success(creating ? t('toast.created') : t('toast.updated'));
      onSaved(result);
    },
  });

  return (
    <form
      className="redemption-editor"
      noValidate
      onSubmit={(e) => void handleSubmit((values) => save.mutate(values))(e)}
    >
      <Field
        id="code-name"
        label={t('editor.field.name')}
        hint={creating ? t('editor.hint.name') : undefined}
        error={message(errors.name?.message)}
      >
        <Input id="code-name" autoComplete="off" {...register('name')} />
      </Field>
      <Field
        id="code-quota"
        label={t('editor.field.quota')}
        hint={
          Number.isInteger(quota) ? t('editor.hint.quota', { amount: formatAmount(quota) }) : null
        }
        error={message(errors.quota?.message)}
      >
        <Input
          id="code-quota"
          type="number"
          step={1}
          min={1}
          {...register('quota', { valueAsNumber: true })}
        />
      </Field>
      <div className="redemption-editor__presets" role="group" aria-label={t('editor.presets')}>
        {QUOTA_PRESETS.map((value) => (
          <Button
            key={value}
            size="sm"
            variant="secondary"
            onClick={() => setValue('quota', value, { shouldValidate: true })}
          >
            {formatQuota(value, { quotaPerUnit: status.quota_per_unit, displayInCurrency: true })}
          </Button>
        ))}
      </div>
      {creating ? (
        <Field
          id="code-count"
          label={t('editor.field.count')}
          hint={t('editor.hint.count')}
          error={message(errors.count?.message)}
        >
          <Input
            id="code-count"
            type="number"
            step={1}
            min={1}
            max={100}
            {...register('count', { valueAsNumber: true })}
          />
        </Field>
      ) : null}
      <DialogFooter>
        <Button variant="secondary" onClick={onCancel}>
          {t('editor.cancel')}
        </Button>
        <Button type="submit" disabled={save.isPending}>
          {t('editor.submit')}
        </Button>
      </DialogFooter>
    </form>
  );
}
