import { zodResolver } from '@hookform/resolvers/zod';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { ParseKeys } from 'i18next';
import { Controller, useForm, useWatch } from 'react-hook-form';
import { useTranslation } from 'react-i18next';

import { describeApiError } from '@/api/errors';
import { selfQueryOptions, updateUserSetting } from '@/api/personal';
import { parseUserSetting } from '@/api/user';
import type { User } from '@/api/user';
import { Button } from '@/components/ui/button';
import { Card, CardContent, CardHeader, CardTitle } from '@/components/ui/card';
import { Field } from '@/components/ui/field';
import { Input } from '@/components/ui/input';
import { Select } from '@/components/ui/select';
import { Switch } from '@/components/ui/switch';
import { toast } from '@/stores/toasts';

import { notificationSchema, thresholdPresets } from './schema';
import type { NotificationValues } from './schema';

/** Notification settings from the user's `setting` JSON; the webhook secret is write-only. */
export function NotificationCard({ user }: { user: User }) {
  const { t } = useTranslation('personal');
  const queryClient = useQueryClient();
  const setting = parseUserSetting(user.setting);
  const {
    register,
    handleSubmit,
    control,
    setValue,
    formState: { errors },
  } = useForm<NotificationValues>({
    resolver: zodResolver(notificationSchema),
    defaultValues: {
      notify_type: setting.notify_type,
      quota_warning_threshold: setting.quota_warning_threshold,
      webhook_url: setting.webhook_url,
      webhook_secret: '',
      notification_email: setting.notification_email,
      accept_unset_model_ratio_model: setting.accept_unset_model_ratio_model,
    },
  });
  const save = useMutation({
    mutationFn: updateUserSetting,
    meta: { silent: true },
    onSuccess: () => {
      toast.success(t('notify.success'));
      void queryClient.invalidateQueries({ queryKey: selfQueryOptions.queryKey });
    },
    onError: (error) => toast.error(t('notify.failed', { reason: describeApiError(error).text })),
  });
  const message = (key: string | undefined) => (key ? t(key as ParseKeys<'personal'>) : undefined);
  const notifyType = useWatch({ control, name: 'notify_type' });

  return (
    <Card>
      <CardHeader>
        <CardTitle>{t('notify.title')}</CardTitle>
      </CardHeader>
      <CardContent>
        <form
          className="personal__form"
          noValidate
          onSubmit={handleSubmit((values) => save.mutate(values))}
        >
          <Field id="notify-type" label={t('notify.type.label')}>
            <Select id="notify-type" {...register('notify_type')}>
              <option value="email">{t('notify.type.email')}</option>
              <option value="webhook">{t('notify.type.webhook')}</option>
            </Select>
          </Field>
          <Field
            id="notify-threshold"
            label={t('notify.threshold.label')}
            hint={t('notify.threshold.hint')}
            error={message(errors.quota_warning_threshold?.message)}
          >
            <Input
              id="notify-threshold"
              type="number"
              min={0}
              {...register('quota_warning_threshold', { valueAsNumber: true })}
            />
          </Field>
          <div
            className="personal__presets"
            role="group"
            aria-label={t('notify.threshold.presets')}
          >
            {thresholdPresets.map((preset) => (
              <Button
                key={preset.value}
                size="sm"
                variant="ghost"
                onClick={() =>
                  setValue('quota_warning_threshold', preset.value, { shouldValidate: true })
                }
              >
                {t('notify.threshold.preset', { value: preset.value, label: preset.label })}
              </Button>
            ))}
          </div>
          {notifyType === 'webhook' ? (
            <>
              <Field
                id="notify-webhook-url"
                label={t('notify.webhook.url')}
                hint={t('notify.webhook.urlHint')}
                error={message(errors.webhook_url?.message)}
              >
                <Input
                  id="notify-webhook-url"
                  type="url"
                  placeholder="https://"
                  {...register('webhook_url')}
                />
              </Field>
              <Field
                id="notify-webhook-secret"
                label={t('notify.webhook.secret')}
                hint={t('notify.webhook.secretHint')}
              >
                <Input
                  id="notify-webhook-secret"
                  type="password"
                  autoComplete="off"
                  placeholder={
                    setting.webhook_secret_set
                      ? t('notify.webhook.secretSet')
                      : t('notify.webhook.secretUnset')
                  }
                  {...register('webhook_secret')}
                />
              </Field>
            </>
          ) : (
            <Field
              id="notify-email"
              label={t('notify.email.label')}
              hint={t('notify.email.hint')}
              error={message(errors.notification_email?.message)}
            >
              <Input
                id="notify-email"
                type="email"
                placeholder={user.email}
                {...register('notification_email')}
              />
            </Field>
          )}
          <Controller
            control={control}
            name="accept_unset_model_ratio_model"
            render={({ field }) => (
              <label className="personal__switch" htmlFor="notify-accept-unset">
                <span>{t('notify.acceptUnset')}</span>
                <Switch
                  id="notify-accept-unset"
                  checked={field.value}
                  onCheckedChange={field.onChange}
                />
              </label>
            )}
          />
          <div className="personal__actions">
            <Button type="submit" disabled={save.isPending}>
              {t('notify.submit')}
            </Button>
          </div>
        </form>
      </CardContent>
    </Card>
  );
}
