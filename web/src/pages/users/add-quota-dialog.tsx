import { zodResolver } from '@hookform/resolvers/zod';
import type { ParseKeys } from 'i18next';
import { useForm, useWatch } from 'react-hook-form';
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
import { useFormatQuota } from '@/lib/use-format-quota';

import { addQuotaSchema } from './schema';
import type { AddQuotaValues } from './schema';

/**
 * Adds (or, with a negative amount, removes) quota: the form's quota becomes the resulting
 * absolute integer, which the edit form then sends.
 */
export function AddQuotaDialog({
  open,
  onOpenChange,
  current,
  onApply,
}: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  current: number;
  onApply: (quota: number) => void;
}) {
  const { t } = useTranslation('users');
  const formatQuota = useFormatQuota();
  const {
    register,
    handleSubmit,
    control,
    reset,
    formState: { errors },
  } = useForm<AddQuotaValues>({
    resolver: zodResolver(addQuotaSchema),
    defaultValues: { amount: 0 },
  });
  const amount = useWatch({ control, name: 'amount' });
  const result = current + (Number.isInteger(amount) ? amount : 0);

  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent>
        <DialogHeader>
          <DialogTitle>{t('quota.add.title')}</DialogTitle>
          <DialogDescription>
            {t('quota.add.preview', { current: formatQuota(current), result: formatQuota(result) })}
          </DialogDescription>
        </DialogHeader>
        <form
          className="user-edit__form"
          noValidate
          onSubmit={(event) => {
            event.stopPropagation();
            void handleSubmit(({ amount: added }) => {
              onApply(current + added);
              reset({ amount: 0 });
              onOpenChange(false);
            })(event);
          }}
        >
          <Field
            id="add-quota-amount"
            label={t('quota.add.amount')}
            hint={t('quota.add.hint')}
            error={
              errors.amount?.message ? t(errors.amount.message as ParseKeys<'users'>) : undefined
            }
          >
            <Input
              id="add-quota-amount"
              type="number"
              step={1}
              {...register('amount', { valueAsNumber: true })}
            />
          </Field>
          <DialogFooter>
            <Button type="submit">{t('quota.add.submit')}</Button>
          </DialogFooter>
        </form>
      </DialogContent>
    </Dialog>
  );
}
