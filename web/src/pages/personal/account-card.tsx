import { zodResolver } from '@hookform/resolvers/zod';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ParseKeys } from 'i18next';
import { KeyRound, Trash2 } from 'lucide-react';
import { useState } from 'react';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';

import { changePassword, deleteSelf, resetAccessToken } from '@/api/personal';
import { twoFactorStatusQuery } from '@/api/two-factor';
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
import { copyText } from '@/stores/manual-copy';
import { useSession } from '@/stores/session';
import { toast } from '@/stores/toasts';

import { deleteAccountSchema, passwordSchema } from './schema';
import type { DeleteAccountValues, PasswordValues } from './schema';

/** System access token, password change and account deletion. */
export function AccountCard({ user }: { user: User }) {
  const { t } = useTranslation('personal');
  const [token, setToken] = useState<string | null>(null);
  const [deleting, setDeleting] = useState(false);
  const reset = useMutation({
    mutationFn: resetAccessToken,
    onSuccess: (issued) => {
      setToken(issued);
      void copyText(issued, t('token.copied'));
    },
  });

  return (
    <Card>
      <CardHeader>
        <CardTitle>{t('account.title')}</CardTitle>
      </CardHeader>
      <CardContent>
        <div className="personal__form">
          <Field id="access-token" label={t('token.label')} hint={t('token.hint')}>
            <div className="personal__inline">
              {token ? (
                <code id="access-token" className="personal__secret">
                  {token}
                </code>
              ) : null}
              <Button variant="secondary" disabled={reset.isPending} onClick={() => reset.mutate()}>
                <KeyRound aria-hidden />
                {t('token.reset')}
              </Button>
            </div>
          </Field>
          <PasswordForm />
          <div className="personal__actions">
            <Button variant="danger" onClick={() => setDeleting(true)}>
              <Trash2 aria-hidden />
              {t('delete.open')}
            </Button>
          </div>
        </div>
      </CardContent>
      <DeleteAccountDialog open={deleting} onOpenChange={setDeleting} username={user.username} />
    </Card>
  );
}

const emptyPassword: PasswordValues = { original: '', password: '', confirm: '' };

function PasswordForm() {
  const { t } = useTranslation('personal');
  const {
    register,
    handleSubmit,
    reset,
    formState: { errors },
  } = useForm<PasswordValues>({
    resolver: zodResolver(passwordSchema),
    defaultValues: emptyPassword,
  });
  const change = useMutation({
    mutationFn: ({ original, password }: PasswordValues) => changePassword(original, password),
    onSuccess: () => {
      toast.success(t('password.success'));
      reset(emptyPassword);
    },
  });
  const message = (key: string | undefined) => (key ? t(key as ParseKeys<'personal'>) : undefined);
  return (
    <form
      className="personal__form"
      noValidate
      aria-label={t('password.title')}
      onSubmit={handleSubmit((values) => change.mutate(values))}
    >
      <Field
        id="password-original"
        label={t('password.original')}
        error={message(errors.original?.message)}
      >
        <Input
          id="password-original"
          type="password"
          autoComplete="current-password"
          {...register('original')}
        />
      </Field>
      <Field id="password-new" label={t('password.new')} error={message(errors.password?.message)}>
        <Input
          id="password-new"
          type="password"
          autoComplete="new-password"
          placeholder={t('password.newPlaceholder')}
          {...register('password')}
        />
      </Field>
      <Field
        id="password-confirm"
        label={t('password.confirm')}
        error={message(errors.confirm?.message)}
      >
        <Input
          id="password-confirm"
          type="password"
          autoComplete="new-password"
          {...register('confirm')}
        />
      </Field>
      <div className="personal__actions">
        <Button type="submit" disabled={change.isPending}>
          {t('password.submit')}
        </Button>
      </div>
    </form>
  );
}

function DeleteAccountDialog({
  open,
  onOpenChange,
  username,
}: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  username: string;
}) {
  const { t } = useTranslation('personal');
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const clearUser = useSession((s) => s.clearUser);
  const twoFactor = useQuery(twoFactorStatusQuery);
  const {
    register,
    handleSubmit,
    formState: { errors },
  } = useForm<DeleteAccountValues>({
    resolver: zodResolver(deleteAccountSchema(username)),
    defaultValues: { confirmation: '', password: '', code: '' },
  });
  const remove = useMutation({
    mutationFn: ({ password, code }: DeleteAccountValues) => deleteSelf({ password, code }),
    onSuccess: () => {
      toast.success(t('delete.success'));
      clearUser();
      queryClient.removeQueries({ queryKey: ['self'] });
      void navigate('/login');
    },
  });
  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent>
        <DialogHeader>
          <DialogTitle>{t('delete.title')}</DialogTitle>
          <DialogDescription>{t('delete.description', { username })}</DialogDescription>
        </DialogHeader>
        <form
          className="personal__form"
          noValidate
          onSubmit={handleSubmit((values) => remove.mutate(values))}
        >
          <Field
            id="delete-confirmation"
            label={t('delete.confirmLabel')}
            error={
              errors.confirmation?.message
                ? t(errors.confirmation.message as ParseKeys<'personal'>)
                : undefined
            }
          >
            <Input id="delete-confirmation" autoComplete="off" {...register('confirmation')} />
          </Field>
          <Field id="delete-password" label={t('delete.password')} hint={t('delete.passwordHint')}>
            <Input
              id="delete-password"
              type="password"
              autoComplete="current-password"
              {...register('password')}
            />
          </Field>
          {twoFactor.data?.enabled ? (
            <Field id="delete-code" label={t('delete.code')}>
              <Input id="delete-code" autoComplete="one-time-code" {...register('code')} />
            </Field>
          ) : null}
          <DialogFooter>
            <Button type="submit" variant="danger" disabled={remove.isPending}>
              {t('delete.submit')}
            </Button>
          </DialogFooter>
        </form>
      </DialogContent>
    </Dialog>
  );
}
