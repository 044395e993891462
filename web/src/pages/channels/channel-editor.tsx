import { zodResolver } from '@hookform/resolvers/zod';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ParseKeys } from 'i18next';
import { Download, PlugZap, X } from 'lucide-react';
import { useState } from 'react';
import { Controller, useForm, useWatch } from 'react-hook-form';
import { useTranslation } from 'react-i18next';

import { channelTypesQueryOptions } from '@/api/channel-types';
import type { ChannelTypeInfo } from '@/api/channel-types';
import {
  channelQueryOptions,
  createChannel,
  disabledKeys,
  fetchEnabledModels,
  fetchUpstreamModels,
  splitList,
  testProxy,
  updateChannel,
} from '@/api/channels';
import type { Channel } from '@/api/channels';
import { localizedMessage } from '@/api/errors';
import { limitsQueryOptions, saveLimits } from '@/api/limits';
import type { OwnerLimits } from '@/api/limits';
import { ROLE_ROOT } from '@/api/user';
import { groupsQueryOptions } from '@/api/users';
import { DraftLimitsSection, LimitsSection } from '@/components/limits/limits-section';
import { Alert } from '@/components/ui/alert';
import { Badge } from '@/components/ui/badge';
import { Button } from '@/components/ui/button';
import {
  Dialog,
  DialogContent,
  DialogDescription,
  DialogHeader,
  DialogTitle,
} from '@/components/ui/dialog';
import { Field } from '@/components/ui/field';
import { Input } from '@/components/ui/input';
import { Select } from '@/components/ui/select';
import { Spinner } from '@/components/ui/spinner';
import { Switch } from '@/components/ui/switch';
import { formatAmount } from '@/lib/format';
import { useSession } from '@/stores/session';
import { toast } from '@/stores/toasts';

import { typeLabel } from './constants';
import { KeyReveal } from './key-reveal';
import { channelFormSchema, newChannelValues, toChannelPayload } from './schema';
import type { ChannelFormValues } from './schema';
import { fieldValue, keyFormatHint, TypeFields } from './type-fields';

import './channels.css';

function formValues(channel: Channel): ChannelFormValues {
  return {
    type: channel.type,
    name: channel.name,
    base_url: channel.base_url,
    key: '',
    batch: false,
    models: splitList(channel.models),
    groups: splitList(channel.group),
    model_mapping: channel.model_mapping,
    status_code_mapping: channel.status_code_mapping,
    param_override: channel.param_override,
    setting: channel.setting,
    priority: channel.priority,
    weight: channel.weight,
    max_input_tokens: channel.max_input_tokens,
    tag: channel.tag,
    auto_ban: channel.auto_ban === 1,
    test_model: channel.test_model,
    proxy: channel.proxy,
    openai_organization: channel.openai_organization,
    other: channel.other,
  };
}

/** Which channel the editor drawer shows: a new one, a stored one by id, or none (closed). */
export type EditorTarget = { kind: 'new' } | { kind: 'edit'; id: number } | null;

/**
 * The channel editor as a side drawer over the list (/channel/add, /channel/edit/{id}).
 * Closing it (or saving) calls `onClose`, which navigates back to /channel.
 */
export function ChannelEditorDrawer({
  target,
  onClose,
}: {
  target: EditorTarget;
  onClose: () => void;
}) {
  const { t } = useTranslation('channels');
  const creating = target?.kind === 'new';
  const channelId = target?.kind === 'edit' ? target.id : Number.NaN;
  const channel = useQuery({
    ...channelQueryOptions(channelId),
    enabled: target?.kind === 'edit' && Number.isInteger(channelId),
  });
  const types = useQuery({ ...channelTypesQueryOptions, enabled: target !== null });

  return (
    <Dialog open={target !== null} onOpenChange={(open) => (open ? undefined : onClose())}>
      <DialogContent
        side="right"
        className="channel-editor"
        // A click beside the drawer must not throw away a half-filled form; Esc and the buttons close it.
        onInteractOutside={(event) => event.preventDefault()}
      >
        <DialogHeader>
          <DialogTitle>{creating ? t('edit.addTitle') : t('edit.editTitle')}</DialogTitle>
          <DialogDescription>
            {creating
              ? t('edit.addDescription')
              : t('edit.editDescription', { id: Number.isInteger(channelId) ? channelId : '' })}
          </DialogDescription>
        </DialogHeader>
        {target === null ? null : types.isError && !types.data ? (
          <Alert tone="danger">{t('edit.typesFailed')}</Alert>
        ) : !types.data ? (
          <Spinner label={t('list.loading')} />
        ) : creating ? (
          <ChannelForm types={types.data} onDone={onClose} />
        ) : !Number.isInteger(channelId) || (channel.isError && !channel.data) ? (
          <Alert tone="danger">{t('edit.loadFailed')}</Alert>
        ) : !channel.data ? (
          <Spinner label={t('list.loading')} />
        ) : (
          <>
            <ChannelForm
              key={channel.data.id}
              types={types.data}
              channel={channel.data}
              onDone={onClose}
            />
            <LimitsSection
              owner={{ kind: 'channel', id: channel.data.id }}
              keyCount={channel.data.key_count}
            />
          </>
        )}
      </DialogContent>
    </Dialog>
  );
}

function ChannelForm({
  types,
  channel,
  onDone,
}: {
  types: ChannelTypeInfo[];
  channel?: Channel;
  onDone: () => void;
}) {
  const { t } = useTranslation('channels');
  const queryClient = useQueryClient();
  const creating = channel === undefined;
  const isRoot = useSession((s) => (s.user?.role ?? 0) >= ROLE_ROOT);
  const groups = useQuery(groupsQueryOptions);
  const [customModel, setCustomModel] = useState('');
  // A new channel's rate limits, saved once it has its id (`null` while they are invalid).
  const [draftLimits, setDraftLimits] = useState<OwnerLimits | null>(null);
  const {
    register,
    handleSubmit,
    control,
    getValues,
    setValue,
    setError,
    formState: { errors },
  } = useForm<ChannelFormValues>({
    resolver: zodResolver(channelFormSchema(creating)),
    defaultValues: channel ? formValues(channel) : newChannelValues,
  });
  const type = useWatch({ control, name: 'type' });
  const models = useWatch({ control, name: 'models' });
  const other = useWatch({ control, name: 'other' });
  const setting = useWatch({ control, name: 'setting' });
  const keyText = useWatch({ control, name: 'key' });
  const batch = useWatch({ control, name: 'batch' });
  const row = types.find((ct) => ct.id === type);
  const message = (key: string | undefined) => (key ? t(key as ParseKeys<'channels'>) : undefined);

  const save = useMutation({
    mutationFn: async (values: ChannelFormValues) => {
      const { channel: body, notices } = toChannelPayload(values, row);
      for (const notice of notices) toast.info(t(`toast.${notice}`));
      if (creating) {
        const created = await createChannel(values.batch ? 'batch' : 'single', body);
        const limits = draftLimits;
        if (limits && hasLimits(limits)) {
          try {
            await Promise.all(created.ids.map((id) => saveLimits({ kind: 'channel', id }, limits)));
          } catch (error) {
            toast.error(
              t('edit.limitsNotSaved', { message: error instanceof Error ? error.message : '' }),
            );
          }
        }
        return created.message;
      }
      return updateChannel({ ...body, id: channel.id });
    },
    onSuccess: (serverNotice) => {
      if (serverNotice) toast.info(t('toast.notice', { message: serverNotice }));
      toast.success(creating ? t('toast.created') : t('toast.updated'));
      void queryClient.invalidateQueries({ queryKey: ['channels'] });
      // Per-key limits follow their keys to new lines when the keys change.
      if (!creating) {
        void queryClient.invalidateQueries({
          queryKey: limitsQueryOptions({ kind: 'channel', id: channel.id }).queryKey,
        });
      }
      onDone();
    },
  });

  const addModels = (more: string[]) => {
    const current = getValues('models');
    const fresh = more.map((m) => m.trim()).filter((m) => m !== '' && !current.includes(m));
    if (fresh.length < more.length) toast.info(t('toast.modelsExist'));
    setValue('models', [...current, ...new Set(fresh)], { shouldValidate: true });
  };

  const fetchModels = useMutation({
    mutationFn: () => {
      if (channel) return fetchUpstreamModels({ id: channel.id });
      return fetchUpstreamModels({
        base_url: getValues('base_url').trim().replace(/\/+$/, ''),
        type: getValues('type'),
        key: getValues('key').trim().split('\n')[0] ?? '',
      });
    },
    meta: { silent: true },
    onSuccess: (list) => {
      const current = getValues('models');
      setValue('models', [...new Set([...current, ...list])], { shouldValidate: true });
      toast.success(t('toast.modelsFetched', { count: list.length }));
    },
    onError: (error) => toast.error(`${t('toast.fetchModelsFailed')}: ${localizedMessage(error)}`),
  });

  const fillEnabled = useMutation({
    mutationFn: fetchEnabledModels,
    meta: { silent: true },
    onSuccess: (list) => {
      const current = getValues('models');
      setValue('models', [...new Set([...current, ...list])], { shouldValidate: true });
      toast.success(
        t('toast.modelsFilled', { count: list.filter((m) => !current.includes(m)).length }),
      );
    },
    onError: (error) =>
      toast.error(`${t('toast.enabledModelsFailed')}: ${localizedMessage(error)}`),
  });

  const proxyCheck = useMutation({
    mutationFn: testProxy,
    meta: { silent: true },
    onSuccess: (report) =>
      toast.success(
        t('toast.proxyOk', { status: report.status, seconds: formatAmount(report.time) }),
      ),
    onError: (error) => toast.error(t('toast.proxyFailed', { message: localizedMessage(error) })),
  });

  const keyFormat = keyFormatHint(t, row, setting);
  const baseUrlHint = row?.base_url_required
    ? t(row.family === 'azure' ? 'edit.baseUrlHint.azure' : 'edit.baseUrlHint.required')
    : undefined;
  // What the relay serves for the type (a balance query alone relays nothing).
  const serves = (row?.capabilities ?? []).filter((c) => c !== 'balance');
  const keysOff = channel ? disabledKeys(channel) : [];
  const groupNames = [
    ...new Set([...(groups.data ?? []), ...(channel ? splitList(channel.group) : ['default'])]),
  ];
  const knownForType = row?.models ?? [];

  // The type's required extra fields (the server checks them too).
  const submit = (values: ChannelFormValues) => {
    const missing = row?.fields.find(
      (f) => f.required && f.default === '' && fieldValue(values, f).trim() === '',
    );
    if (missing) {
      setError(missing.target === 'other' ? 'other' : 'setting', {
        message: 'validation.required',
      });
      return;
    }
    if (creating && draftLimits === null) {
      toast.error(t('edit.limitsInvalid'));
      return;
    }
    save.mutate(values);
  };

  return (
    <form className="channel-edit" noValidate onSubmit={handleSubmit(submit)}>
      <Field
        id="channel-type"
        label={t('field.type')}
        hint={
          serves.length > 0
            ? t('edit.capabilities', {
                list: serves
                  .map((c) => t(`capability.${c}` as ParseKeys<'channels'>, { defaultValue: c }))
                  .join(t('edit.capabilitySeparator')),
              })
            : undefined
        }
      >
        <Select id="channel-type" {...register('type', { valueAsNumber: true })}>
          {types.map((ct) => (
            <option key={ct.id} value={ct.id}>
              {typeLabel(t, ct.id, ct.name)}
            </option>
          ))}
        </Select>
      </Field>
      {row && serves.length === 0 ? (
        <Alert tone="warning" className="channel-edit__not-relayed">
          {t('edit.notRelayed')}
        </Alert>
      ) : null}
      <Field id="channel-name" label={t('field.name')} error={message(errors.name?.message)}>
        <Input id="channel-name" autoComplete="off" {...register('name')} />
      </Field>
      <Field
        id="channel-base-url"
        label={t('field.baseUrl')}
        hint={baseUrlHint}
        error={message(errors.base_url?.message)}
      >
        <Input
          id="channel-base-url"
          autoComplete="off"
          placeholder={row?.default_base_url ?? ''}
          {...register('base_url')}
        />
      </Field>
      <Field
        id="channel-key"
        label={t('field.key')}
        hint={
          <span className="channel-edit__hint">
            {channel?.key_set ? (
              <span>{t('edit.keySet', { count: channel.key_count })}</span>
            ) : null}
            {keyFormat ? <span>{keyFormat}</span> : null}
            <span>{t('edit.keyRotation')}</span>
          </span>
        }
        error={message(errors.key?.message)}
      >
        <textarea
          id="channel-key"
          className="ui-input channels__json"
          rows={3}
          autoComplete="off"
          spellCheck={false}
          {...register('key')}
        />
      </Field>
      {keysOff.length > 0 ? (
        <Alert tone="warning" className="channel-edit__keys-off">
          {t('edit.keysDisabled', {
            lines: keysOff.map((k) => k.index + 1).join(t('edit.lineSeparator')),
            count: keysOff.length,
          })}
        </Alert>
      ) : null}
      {channel && isRoot ? <KeyReveal channelId={channel.id} /> : null}
      {row ? (
        <TypeFields
          row={row}
          values={{ other, setting }}
          register={register}
          setValue={setValue}
          errors={{
            other: message(errors.other?.message),
            setting: message(errors.setting?.message),
          }}
        />
      ) : null}
      {creating ? (
        <label className="channels__switch">
          <Controller
            control={control}
            name="batch"
            render={({ field }) => (
              <Switch
                checked={field.value}
                onCheckedChange={field.onChange}
                aria-label={t('edit.batch')}
              />
            )}
          />
          {t('edit.batch')}
        </label>
      ) : null}
      <Field
        id="channel-models-input"
        label={t('field.models')}
        error={message(errors.models?.message)}
      >
        <div className="channel-edit__models">
          <div className="channel-edit__chips" aria-label={t('field.models')} role="list">
            {models.map((model) => (
              <Badge key={model} tone="blue" role="listitem">
                {model}
                <button
                  type="button"
                  className="channel-edit__chip-remove"
                  aria-label={t('edit.removeModel', { model })}
                  onClick={() =>
                    setValue(
                      'models',
                      models.filter((m) => m !== model),
                      { shouldValidate: true },
                    )
                  }
                >
                  <X aria-hidden />
                </button>
              </Badge>
            ))}
          </div>
          <div className="channel-edit__model-tools">
            <Input
              id="channel-models-input"
              placeholder={t('edit.customModel')}
              value={customModel}
              onChange={(e) => setCustomModel(e.target.value)}
              onKeyDown={(e) => {
                if (e.key === 'Enter') {
                  e.preventDefault();
                  addModels(splitList(customModel.replaceAll('，', ',')));
                  setCustomModel('');
                }
              }}
            />
            <Button
              type="button"
              variant="secondary"
              size="sm"
              onClick={() => {
                addModels(splitList(customModel.replaceAll('，', ',')));
                setCustomModel('');
              }}
            >
              {t('edit.addModel')}
            </Button>
            <Button
              type="button"
              variant="secondary"
              size="sm"
              disabled={fetchModels.isPending}
              onClick={() => {
                if (creating && getValues('key').trim() === '') {
                  toast.error(t('edit.fetchNeedsKey'));
                  return;
                }
                fetchModels.mutate();
              }}
            >
              <Download aria-hidden />
              {t('edit.fetchModels')}
            </Button>
            {knownForType.length > 0 ? (
              <Button
                type="button"
                variant="ghost"
                size="sm"
                onClick={() => addModels(knownForType.filter((m) => !models.includes(m)))}
              >
                {t('edit.fillKnown')}
              </Button>
            ) : null}
            <Button
              type="button"
              variant="ghost"
              size="sm"
              disabled={fillEnabled.isPending}
              onClick={() => fillEnabled.mutate()}
            >
              {t('edit.fillEnabled')}
            </Button>
            <Button
              type="button"
              variant="ghost"
              size="sm"
              onClick={() => setValue('models', [], { shouldValidate: true })}
            >
              {t('edit.clearModels')}
            </Button>
          </div>
        </div>
      </Field>
      <fieldset className="channel-edit__groups">
        <legend>{t('field.groups')}</legend>
        <Controller
          control={control}
          name="groups"
          render={({ field }) => (
            <>
              {groupNames.map((group) => (
                <label key={group}>
                  <input
                    type="checkbox"
                    checked={field.value.includes(group)}
                    onChange={(e) =>
                      field.onChange(
                        e.target.checked
                          ? [...field.value, group]
                          : field.value.filter((g) => g !== group),
                      )
                    }
                  />
                  {group}
                </label>
              ))}
            </>
          )}
        />
      </fieldset>
      {(
        [
          ['model_mapping', 'modelMapping', '{"gpt-3.5-turbo": "gpt-35-turbo"}'],
          ['status_code_mapping', 'statusCodeMapping', '{"400": "500"}'],
          ['param_override', 'paramOverride', '{"temperature": 0}'],
          ['setting', 'setting', '{}'],
        ] as const
      ).map(([name, label, placeholder]) => (
        <Field
          key={name}
          id={`channel-${name}`}
          label={t(`field.${label}`)}
          hint={t('edit.jsonHint')}
          error={message(errors[name]?.message)}
        >
          <textarea
            id={`channel-${name}`}
            className="ui-input channels__json"
            rows={3}
            placeholder={placeholder}
            spellCheck={false}
            {...register(name)}
          />
        </Field>
      ))}
      <div className="channel-edit__row">
        <Field
          id="channel-priority"
          label={t('field.priority')}
          error={message(errors.priority?.message)}
        >
          <Input
            id="channel-priority"
            type="number"
            {...register('priority', { valueAsNumber: true })}
          />
        </Field>
        <Field
          id="channel-weight"
          label={t('field.weight')}
          error={message(errors.weight?.message)}
        >
          <Input
            id="channel-weight"
            type="number"
            {...register('weight', { valueAsNumber: true })}
          />
        </Field>
      </div>
      <Field
        id="channel-max-input-tokens"
        label={t('field.maxInputTokens')}
        hint={t('edit.maxInputTokensHint')}
        error={message(errors.max_input_tokens?.message)}
      >
        <Input
          id="channel-max-input-tokens"
          type="number"
          min={0}
          {...register('max_input_tokens', { valueAsNumber: true })}
        />
      </Field>
      <Field id="channel-tag" label={t('field.tag')}>
        <Input id="channel-tag" autoComplete="off" {...register('tag')} />
      </Field>
      <label className="channels__switch">
        <Controller
          control={control}
          name="auto_ban"
          render={({ field }) => (
            <Switch
              checked={field.value}
              onCheckedChange={field.onChange}
              aria-label={t('field.autoBan')}
            />
          )}
        />
        {t('field.autoBan')}
      </label>
      <Field id="channel-test-model-field" label={t('field.testModel')}>
        <Input id="channel-test-model-field" autoComplete="off" {...register('test_model')} />
      </Field>
      <Field id="channel-proxy" label={t('field.proxy')} hint={t('edit.proxyHint')}>
        <div className="channel-edit__inline">
          <Input
            id="channel-proxy"
            autoComplete="off"
            placeholder="socks5://…"
            {...register('proxy')}
          />
          <Button
            type="button"
            variant="secondary"
            size="sm"
            disabled={proxyCheck.isPending}
            onClick={() => {
              const proxy = getValues('proxy').trim();
              if (proxy === '') {
                toast.error(t('edit.proxyRequired'));
                return;
              }
              proxyCheck.mutate(proxy);
            }}
          >
            <PlugZap aria-hidden />
            {t('edit.testProxy')}
          </Button>
        </div>
      </Field>
      <Field id="channel-organization" label={t('field.organization')}>
        <Input id="channel-organization" autoComplete="off" {...register('openai_organization')} />
      </Field>
      {creating ? (
        <DraftLimitsSection keyCount={batch ? 1 : keyLines(keyText)} onDraft={setDraftLimits} />
      ) : null}
      <div className="channel-edit__actions">
        <Button type="submit" disabled={save.isPending}>
          {t('edit.submit')}
        </Button>
        <Button type="button" variant="secondary" onClick={onDone}>
          {t('edit.cancel')}
        </Button>
      </div>
    </form>
  );
}

/** Whether a new channel's draft limits set anything. */
const hasLimits = (l: OwnerLimits) =>
  l.concurrency_limit > 0 ||
  l.rpm_limit > 0 ||
  l.tpm_limit > 0 ||
  l.rpd_limit > 0 ||
  l.key_limits.length > 0;

/** The number of keys in a key text (one per non-empty line). */
const keyLines = (key: string | undefined) =>
  (key ?? '').split('\n').filter((line) => line.trim() !== '').length;
