import { zodResolver } from '@hookform/resolvers/zod';
import { useMutation, useQuery } from '@tanstack/react-query';
import type { ParseKeys } from 'i18next';
import { Controller, useForm, useWatch } from 'react-hook-form';
import { useTranslation } from 'react-i18next';

import { notifyApiError } from '@/api/errors';
import { useStatus } from '@/api/status';
import {
  createToken,
  selfGroupsQueryOptions,
  tokenQueryOptions,
  updateToken,
  userModelsQueryOptions,
} from '@/api/tokens';
import type { Token } from '@/api/tokens';
import { BudgetSection } from '@/components/limits/budget-section';
import { LimitsSection } from '@/components/limits/limits-section';
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
import { Select } from '@/components/ui/select';
import { Spinner } from '@/components/ui/spinner';
import { Switch } from '@/components/ui/switch';
import { formatQuota } from '@/lib/format';
import { useFormatQuota } from '@/lib/use-format-quota';
import { toast } from '@/stores/toasts';

import {
  COUNT_PRESETS,
  createBatch,
  expiryShortcuts,
  newTokenValues,
  QUOTA_PRESETS,
  shortcutExpiry,
  tokenFormSchema,
  tokenValues,
  toTokenPayload,
} from './schema';
import type { TokenFormValues } from './schema';

export interface TokenEditorProps {
  open: boolean;
  /** The token to edit; null creates new ones. */
  id: number | null;
  onOpenChange: (open: boolean) => void;
  onSaved: () => void;
}

/** The create/edit side drawer (600 px, full width on a phone). */
export function TokenEditor({ open, id, onOpenChange, onSaved }: TokenEditorProps) {
  const { t } = useTranslation('tokens');
  const token = useQuery({
    ...tokenQueryOptions(id ?? 0),
    enabled: id !== null && open,
  });
  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent side="right" size="narrow">
        <DialogHeader>
          <DialogTitle>{id === null ? t('editor.addTitle') : t('editor.editTitle')}</DialogTitle>
          <DialogDescription>
            {id === null ? t('editor.addDescription') : t('editor.editDescription')}
          </DialogDescription>
        </DialogHeader>
        {id === null ? (
          <TokenForm key="new" onDone={onSaved} onCancel={() => onOpenChange(false)} />
        ) : token.isError && !token.data ? (
          <Alert tone="danger">{t('editor.loadFailed')}</Alert>
        ) : !token.data ? (
          <Spinner label={t('list.loading')} />
        ) : (
          <>
            <TokenForm
              key={token.data.id}
              token={token.data}
              onDone={onSaved}
              onCancel={() => onOpenChange(false)}
            />
            <BudgetSection owner={{ kind: 'token', id: token.data.id }} />
            <LimitsSection owner={{ kind: 'token', id: token.data.id }} />
          </>
        )}
      </DialogContent>
    </Dialog>
  );
}

function TokenForm({
  token,
  onDone,
  onCancel,
}: {
  token?: Token;
  onDone: () => void;
  onCancel: () => void;
}) {
  const { t } = useTranslation('tokens');
  const status = useStatus();
  const formatAmount = useFormatQuota();
  const creating = token === undefined;
  const models = useQuery(userModelsQueryOptions);
  const groups = useQuery(selfGroupsQueryOptions);
  const {
    register,
    handleSubmit,
    control,
    setValue,
    formState: { errors },
  } = useForm<TokenFormValues>({
    resolver: zodResolver(tokenFormSchema),
    defaultValues: token ? tokenValues(token) : newTokenValues,
  });
  const unlimited = useWatch({ control, name: 'unlimited_quota' });
  const limitsOn = useWatch({ control, name: 'model_limits_enabled' });
  const quota = useWatch({ control, name: 'remain_quota' });
  const chosen = useWatch({ control, name: 'model_limits' });
  const message = (key: string | undefined) => (key ? t(key as ParseKeys<'tokens'>) : undefined);

  const save = useMutation({
    mutationFn: async (values: TokenFormValues) => {
      const payload = toTokenPayload(values);
      if (!creating) {
        await updateToken(token.id, payload);
        return { created: 1, error: undefined, updated: true };
      }
      return { ...(await createBatch(payload, values.count, createToken)), updated: false };
    },
    onSuccess: ({ created, error, updated }) => {
      if (error !== undefined) notifyApiError(error);
      if (created === 0) return;
      toast.success(updated ? t('toast.updated') : t('toast.created'));
      onDone();
    },
  });

  const groupEntries = Object.entries(groups.data ?? {});
  const modelChoices = [...new Set([...(models.data ?? []), ...chosen])];
  const presetLabel = (value: number) =>
    formatQuota(value, { quotaPerUnit: status.quota_per_unit, displayInCurrency: true });

  return (
    <form
      className="token-editor"
      noValidate
      onSubmit={(e) => void handleSubmit((values) => save.mutate(values))(e)}
    >
      <Field id="token-name" label={t('editor.field.name')} error={message(errors.name?.message)}>
        <Input
          id="token-name"
          placeholder={t('editor.placeholder.name')}
          autoComplete="off"
          {...register('name')}
        />
      </Field>

      <Field
        id="token-expiry"
        label={t('editor.field.expiry')}
        hint={t('editor.hint.expiry')}
        error={message(errors.expiry?.message)}
      >
        <Input id="token-expiry" placeholder="yyyy-MM-dd HH:mm:ss" {...register('expiry')} />
      </Field>
      <div className="token-editor__presets" role="group" aria-label={t('editor.presets.expiry')}>
        {expiryShortcuts.map((shortcut) => (
          <Button
            key={shortcut}
            size="sm"
            variant="secondary"
            onClick={() => setValue('expiry', shortcutExpiry(shortcut), { shouldValidate: true })}
          >
            {t(`editor.expiry.${shortcut}`)}
          </Button>
        ))}
      </div>

      <Alert tone="info">{t('editor.quotaNotice')}</Alert>
      <Field
        id="token-quota"
        label={t('editor.field.quota')}
        hint={
          Number.isInteger(quota) ? t('editor.hint.quota', { amount: formatAmount(quota) }) : null
        }
        error={message(errors.remain_quota?.message)}
      >
        <Input
          id="token-quota"
          type="number"
          step={1}
          min={0}
          disabled={unlimited}
          {...register('remain_quota', { valueAsNumber: true })}
        />
      </Field>
      <div className="token-editor__presets" role="group" aria-label={t('editor.presets.quota')}>
        {QUOTA_PRESETS.map((value) => (
          <Button
            key={value}
            size="sm"
            variant="secondary"
            disabled={unlimited}
            onClick={() => setValue('remain_quota', value, { shouldValidate: true })}
          >
            {presetLabel(value)}
          </Button>
        ))}
      </div>
      <label className="token-editor__switch">
        <Controller
          control={control}
          name="unlimited_quota"
          render={({ field }) => (
            <Switch
              checked={field.value}
              onCheckedChange={field.onChange}
              aria-label={t('editor.field.unlimited')}
            />
          )}
        />
        {t('editor.field.unlimited')}
      </label>

      {creating ? (
        <>
          <Field
            id="token-count"
            label={t('editor.field.count')}
            hint={t('editor.hint.count')}
            error={message(errors.count?.message)}
          >
            <Input
              id="token-count"
              type="number"
              step={1}
              min={1}
              {...register('count', { valueAsNumber: true })}
            />
          </Field>
          <div
            className="token-editor__presets"
            role="group"
            aria-label={t('editor.presets.count')}
          >
            {COUNT_PRESETS.map((value) => (
              <Button
                key={value}
                size="sm"
                variant="secondary"
                onClick={() => setValue('count', value, { shouldValidate: true })}
              >
                {t('editor.countPreset', { count: value })}
              </Button>
            ))}
          </div>
        </>
      ) : null}

      <label className="token-editor__switch">
        <Controller
          control={control}
          name="model_limits_enabled"
          render={({ field }) => (
            <Switch
              checked={field.value}
              onCheckedChange={field.onChange}
              aria-label={t('editor.field.modelLimitsEnabled')}
            />
          )}
        />
        {t('editor.field.modelLimitsEnabled')}
      </label>
      <fieldset className="token-editor__models" disabled={!limitsOn}>
        <legend>{t('editor.field.modelLimits')}</legend>
        {modelChoices.length === 0 ? (
          <p className="token-editor__muted">{t('editor.noModels')}</p>
        ) : (
          <Controller
            control={control}
            name="model_limits"
            render={({ field }) => (
              <div className="token-editor__model-list">
                {modelChoices.map((model) => (
                  <label key={model}>
                    <input
                      type="checkbox"
                      disabled={!limitsOn}
                      checked={field.value.includes(model)}
                      onChange={(e) =>
                        field.onChange(
                          e.target.checked
                            ? [...field.value, model]
                            : field.value.filter((m) => m !== model),
                        )
                      }
                    />
                    {model}
                  </label>
                ))}
              </div>
            )}
          />
        )}
      </fieldset>

      <Field id="token-ips" label={t('editor.field.allowIps')} hint={t('editor.hint.allowIps')}>
        <textarea
          id="token-ips"
          className="ui-input token-editor__textarea"
          rows={3}
          placeholder={t('editor.placeholder.allowIps')}
          {...register('allow_ips')}
        />
      </Field>

      <Field id="token-group" label={t('editor.field.group')}>
        {groupEntries.length === 0 ? (
          <Select id="token-group" disabled value="">
            <option value="">{t('editor.group.none')}</option>
          </Select>
        ) : (
          <Select id="token-group" {...register('group')}>
            <option value="">{t('editor.group.user')}</option>
            {groupEntries.map(([name, info]) => (
              <option key={name} value={name}>
                {t('editor.group.option', { name, desc: info.desc || name, ratio: info.ratio })}
              </option>
            ))}
          </Select>
        )}
      </Field>

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
