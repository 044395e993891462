import { zodResolver } from '@hookform/resolvers/zod';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ParseKeys } from 'i18next';
import { ArrowLeft, Plus } from 'lucide-react';
import { useState } from 'react';
import { Controller, useForm, useWatch } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate, useParams } from 'react-router';

import type { User } from '@/api/user';
import { resetUserTwoFactor, updateUser, userQueryOptions } from '@/api/users';
import { ConfirmDialog, useConfirm } from '@/components/common/confirm-dialog';
import { PageHeader } from '@/components/layout/page-header';
import { BudgetSection } from '@/components/limits/budget-section';
import { LimitsSection } from '@/components/limits/limits-section';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Card, CardContent, CardHeader, CardTitle } from '@/components/ui/card';
import { Field } from '@/components/ui/field';
import { Input } from '@/components/ui/input';
import { Spinner } from '@/components/ui/spinner';
import { useFormatQuota } from '@/lib/use-format-quota';
import { toast } from '@/stores/toasts';

import { AddQuotaDialog } from './add-quota-dialog';
import { GroupInput } from './group-input';
import { editUserSchema } from './schema';
import type { EditUserValues } from './schema';

import './users.css';

/** /user/edit/{id} (admin): username, display name, password, group and quota of one user. */
export function UserEditPage() {
  const { t } = useTranslation('users');
  const { id } = useParams();
  const userId = Number(id);
  const user = useQuery({ ...userQueryOptions(userId), enabled: Number.isInteger(userId) });

  return (
    <>
      <PageHeader
        title={t('edit.title')}
        actions={
          <Button variant="ghost" asChild>
            <Link to="/user">
              <ArrowLeft aria-hidden />
              {t('edit.back')}
            </Link>
          </Button>
        }
      />
      {!Number.isInteger(userId) || (user.isError && !user.data) ? (
        <Alert tone="danger">{t('edit.loadFailed')}</Alert>
      ) : !user.data ? (
        <Spinner label={t('list.loading')} />
      ) : (
        <UserEditForm key={user.data.id} user={user.data} />
      )}
    </>
  );
}

function UserEditForm({ user }: { user: User }) {
  const { t } = useTranslation('users');
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const formatQuota = useFormatQuota();
  const [addingQuota, setAddingQuota] = useState(false);
  const {
    register,
    handleSubmit,
    control,
    setValue,
    formState: { errors },
  } = useForm<EditUserValues>({
    resolver: zodResolver(editUserSchema),
    defaultValues: {
      username: user.username,
      display_name: user.display_name,
      password: '',
      group: user.group,
      quota: user.quota,
    },
  });
  // The balance this form was opened with: the server applies only the difference, so what the
  // user spends while the admin edits is not erased.
  const [quotaBefore] = useState(user.quota);
  const save = useMutation({
    mutationFn: ({ password, ...values }: EditUserValues) =>
      updateUser({
        id: user.id,
        ...values,
        quota_before: quotaBefore,
        ...(password ? { password } : {}),
      }),
    onSuccess: (saved) => {
      queryClient.setQueryData(userQueryOptions(user.id).queryKey, saved);
      void queryClient.invalidateQueries({ queryKey: ['users'] });
      toast.success(t('toast.updated'));
      void navigate('/user');
    },
  });
  const message = (key: string | undefined) => (key ? t(key as ParseKeys<'users'>) : undefined);
  const quota = useWatch({ control, name: 'quota' });
  const confirm = useConfirm();
  const resetTwoFactor = useMutation({
    mutationFn: () => resetUserTwoFactor(user.id),
    onSuccess: () => toast.success(t('twoFactor.done')),
  });

  return (
    <div className="user-edit">
      <form
        className="user-edit__form"
        noValidate
        onSubmit={handleSubmit((values) => save.mutate(values))}
      >
        <Field
          id="edit-username"
          label={t('field.username')}
          error={message(errors.username?.message)}
        >
          <Input id="edit-username" autoComplete="off" {...register('username')} />
        </Field>
        <Field
          id="edit-display-name"
          label={t('field.displayName')}
          error={message(errors.display_name?.message)}
        >
          <Input id="edit-display-name" autoComplete="off" {...register('display_name')} />
        </Field>
        <Field
          id="edit-password"
          label={t('field.password')}
          hint={t('edit.passwordHint')}
          error={message(errors.password?.message)}
        >
          <Input
            id="edit-password"
            type="password"
            autoComplete="new-password"
            placeholder={t('edit.passwordPlaceholder')}
            {...register('password')}
          />
        </Field>
        <Field id="edit-group" label={t('field.group')} error={message(errors.group?.message)}>
          <Controller
            control={control}
            name="group"
            render={({ field }) => (
              <GroupInput id="edit-group" value={field.value} onChange={field.onChange} />
            )}
          />
        </Field>
        <Field
          id="edit-quota"
          label={t('field.quota')}
          hint={Number.isInteger(quota) ? formatQuota(quota) : undefined}
          error={message(errors.quota?.message)}
        >
          <div className="user-edit__quota">
            <Input
              id="edit-quota"
              type="number"
              step={1}
              {...register('quota', { valueAsNumber: true })}
            />
            <Button variant="secondary" onClick={() => setAddingQuota(true)}>
              <Plus aria-hidden />
              {t('quota.add.open')}
            </Button>
          </div>
        </Field>
        <div className="user-edit__actions">
          <Button type="submit" disabled={save.isPending}>
            {t('edit.submit')}
          </Button>
          <Button variant="secondary" asChild>
            <Link to="/user">{t('edit.cancel')}</Link>
          </Button>
        </div>
      </form>
      <Card>
        <CardContent>
          <BudgetSection owner={{ kind: 'user', id: user.id }} />
          <LimitsSection owner={{ kind: 'user', id: user.id }} />
        </CardContent>
      </Card>
      <Card>
        <CardHeader>
          <CardTitle>{t('edit.bindings')}</CardTitle>
        </CardHeader>
        <CardContent>
          <dl className="user-edit__bindings">
            {(
              [
                ['email', user.email],
                ['github', user.github_id],
                ['oidc', user.oidc_id],
                ['wechat', user.wechat_id],
                ['telegram', user.telegram_id],
                ['linuxdo', user.linux_do_id],
              ] as const
            ).map(([key, value]) => (
              <div key={key}>
                <dt>{t(`binding.${key}`)}</dt>
                <dd>{value || t('binding.none')}</dd>
              </div>
            ))}
          </dl>
        </CardContent>
      </Card>
      <Card>
        <CardHeader>
          <CardTitle>{t('twoFactor.title')}</CardTitle>
        </CardHeader>
        <CardContent>
          <p className="user-edit__note">{t('twoFactor.description')}</p>
          <Button
            variant="danger"
            disabled={resetTwoFactor.isPending}
            onClick={() =>
              confirm.ask({
                title: t('twoFactor.confirmTitle'),
                description: t('twoFactor.confirmDescription', { username: user.username }),
                confirmLabel: t('twoFactor.reset'),
                onConfirm: () => resetTwoFactor.mutate(),
              })
            }
          >
            {t('twoFactor.reset')}
          </Button>
        </CardContent>
      </Card>
      <ConfirmDialog {...confirm.dialog} />
      <AddQuotaDialog
        open={addingQuota}
        onOpenChange={setAddingQuota}
        current={Number.isInteger(quota) ? quota : user.quota}
        onApply={(next) => setValue('quota', next, { shouldDirty: true, shouldValidate: true })}
      />
    </div>
  );
}
