import { zodResolver } from '@hookform/resolvers/zod';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { ParseKeys } from 'i18next';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';

import { createUser } from '@/api/users';
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
import { toast } from '@/stores/toasts';

import { addUserSchema } from './schema';
import type { AddUserValues } from './schema';

const empty: AddUserValues = { username: '', display_name: '', password: '' };

/** The add-user dialog: username, display name, password. */
export function AddUserDialog({
  open,
  onOpenChange,
}: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
}) {
  const { t } = useTranslation('users');
  const queryClient = useQueryClient();
  const {
    register,
    handleSubmit,
    reset,
    formState: { errors },
  } = useForm<AddUserValues>({ resolver: zodResolver(addUserSchema), defaultValues: empty });
  const create = useMutation({
    mutationFn: createUser,
    onSuccess: () => {
      toast.success(t('toast.created'));
      void queryClient.invalidateQueries({ queryKey: ['users'] });
      reset(empty);
      onOpenChange(false);
    },
  });
  const message = (key: string | undefined) => (key ? t(key as ParseKeys<'users'>) : undefined);

  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent>
        <DialogHeader>
          <DialogTitle>{t('add.title')}</DialogTitle>
          <DialogDescription>{t('add.description')}</DialogDescription>
        </DialogHeader>
        <form
          className="user-edit__form"
          noValidate
          onSubmit={handleSubmit((values) => create.mutate(values))}
        >
          <Field
            id="add-username"
            label={t('field.username')}
            error={message(errors.username?.message)}
          >
            <Input id="add-username" autoComplete="off" {...register('username')} />
          </Field>
          <Field
            id="add-display-name"
            label={t('field.displayName')}
            error={message(errors.display_name?.message)}
          >
            <Input id="add-display-name" autoComplete="off" {...register('display_name')} />
          </Field>
          <Field
            id="add-password"
            label={t('field.password')}
            error={message(errors.password?.message)}
          >
            <Input
              id="add-password"
              type="password"
              autoComplete="new-password"
              {...register('password')}
            />
          </Field>
          <DialogFooter>
            <Button type="submit" disabled={create.isPending}>
              {t('add.submit')}
            </Button>
          </DialogFooter>
        </form>
      </DialogContent>
    </Dialog>
  );
}
