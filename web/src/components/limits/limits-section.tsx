import { zodResolver } from '@hookform/resolvers/zod';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ParseKeys } from 'i18next';
import { Plus, X } from 'lucide-react';
import { useEffect } from 'react';
import { useFieldArray, useForm, useWatch } from 'react-hook-form';
import type { Control, FieldError, UseFormRegister } from 'react-hook-form';
import { useTranslation } from 'react-i18next';

import { LIMIT_FIELDS, limitsQueryOptions, saveLimits } from '@/api/limits';
import type { LimitsOwner, OwnerLimits } from '@/api/limits';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Field } from '@/components/ui/field';
import { Input } from '@/components/ui/input';
import { Spinner } from '@/components/ui/spinner';
import { toast } from '@/stores/toasts';

import {
  keyRowsProblems,
  limitsFormSchema,
  limitsValues,
  MAX_KEY_ROWS,
  newKeyRow,
  toLimits,
} from './limits-schema';
import type { LimitsFormValues } from './limits-schema';

import './limits.css';

/**
 * The rate-limit section of the token, user and channel editors (P15): requests at once, per
 * minute and per day, tokens per minute (0 = none); a channel's editor adds rows of limits
 * for single keys, each naming the key's line among the channel's `keyCount` keys.
 */
export function LimitsSection({ owner, keyCount = 0 }: { owner: LimitsOwner; keyCount?: number }) {
  const { t } = useTranslation('limits');
  const query = useQuery(limitsQueryOptions(owner));
  return (
    <section className="limits-section" aria-labelledby={`limits-${owner.kind}-${owner.id}`}>
      <h3 id={`limits-${owner.kind}-${owner.id}`} className="limits-section__title">
        {t('rate.title')}
      </h3>
      <p className="limits-section__note">{t('rate.description')}</p>
      {owner.kind === 'channel' ? (
        <p className="limits-section__note">{t('rate.channelNote')}</p>
      ) : null}
      {query.isError && !query.data ? (
        <Alert tone="danger">{t('rate.loadFailed')}</Alert>
      ) : !query.data ? (
        <Spinner label={t('loading')} />
      ) : (
        <LimitsForm
          key={JSON.stringify(query.data)}
          owner={owner}
          limits={query.data}
          keyCount={keyCount}
        />
      )}
    </section>
  );
}

/**
 * The rate-limit section of a channel being created: the same form, whose valid values are
 * handed to `onDraft` (`null` while invalid) and saved once the channel has its id.
 */
export function DraftLimitsSection({
  keyCount,
  onDraft,
}: {
  keyCount: number;
  onDraft: (limits: OwnerLimits | null) => void;
}) {
  const { t } = useTranslation('limits');
  return (
    <section className="limits-section" aria-labelledby="limits-channel-new">
      <h3 id="limits-channel-new" className="limits-section__title">
        {t('rate.title')}
      </h3>
      <p className="limits-section__note">{t('rate.description')}</p>
      <p className="limits-section__note">{t('rate.draftNote')}</p>
      <LimitsForm
        owner={{ kind: 'channel', id: 0 }}
        limits={EMPTY_LIMITS}
        keyCount={keyCount}
        onDraft={onDraft}
      />
    </section>
  );
}

const EMPTY_LIMITS: OwnerLimits = {
  concurrency_limit: 0,
  rpm_limit: 0,
  tpm_limit: 0,
  rpd_limit: 0,
  key_limits: [],
};

const fieldMessage = (t: (key: ParseKeys<'limits'>) => string, error?: FieldError) =>
  error?.message ? t(error.message as ParseKeys<'limits'>) : undefined;

function LimitsForm({
  owner,
  limits,
  keyCount,
  onDraft,
}: {
  owner: LimitsOwner;
  limits: OwnerLimits;
  keyCount: number;
  /** A draft (a channel being created): no save button, the values go here instead. */
  onDraft?: (limits: OwnerLimits | null) => void;
}) {
  const { t } = useTranslation('limits');
  const queryClient = useQueryClient();
  const {
    register,
    handleSubmit,
    control,
    formState: { errors },
  } = useForm<LimitsFormValues>({
    resolver: zodResolver(limitsFormSchema(keyCount)),
    defaultValues: limitsValues(limits),
    mode: 'onChange',
  });
  const draft = useWatch({ control });
  useEffect(() => {
    if (!onDraft) return;
    const parsed = limitsFormSchema(keyCount).safeParse(draft);
    onDraft(parsed.success ? toLimits(parsed.data) : null);
  }, [draft, keyCount, onDraft]);
  const save = useMutation({
    mutationFn: (values: LimitsFormValues) => saveLimits(owner, toLimits(values)),
    onSuccess: (saved) => {
      queryClient.setQueryData(limitsQueryOptions(owner).queryKey, saved);
      toast.success(t('rate.saved'));
    },
  });
  const id = `limits-${owner.kind}-${owner.id}`;
  return (
    <div className="limits-form" role="group" aria-label={t('rate.formLabel')}>
      <div className="limits-form__grid">
        {LIMIT_FIELDS.map((field) => (
          <Field
            key={field}
            id={`${id}-${field}`}
            label={t(`rate.field.${field}`)}
            error={fieldMessage(t, errors[field])}
          >
            <Input
              id={`${id}-${field}`}
              type="number"
              min={0}
              step={1}
              {...register(field, { valueAsNumber: true })}
            />
          </Field>
        ))}
      </div>
      {owner.kind === 'channel' ? (
        <KeyRows control={control} register={register} keyCount={keyCount} />
      ) : null}
      {onDraft ? null : (
        <div className="limits-form__actions">
          <Button
            disabled={save.isPending}
            onClick={() => void handleSubmit((values) => save.mutate(values))()}
          >
            {t('rate.save')}
          </Button>
        </div>
      )}
    </div>
  );
}

/** A channel's per-key limits: one row per key line. */
function KeyRows({
  control,
  register,
  keyCount,
}: {
  control: Control<LimitsFormValues>;
  register: UseFormRegister<LimitsFormValues>;
  keyCount: number;
}) {
  const { t } = useTranslation('limits');
  const { fields, append, remove } = useFieldArray({ control, name: 'key_rows' });
  const rows = useWatch({ control, name: 'key_rows' });
  // Said live from the watched rows: a row's error hides the list's own in the form state.
  const messages = keyRowsProblems(rows, keyCount);
  return (
    <fieldset className="limits-rows">
      <legend>{t('rate.key.title')}</legend>
      <p className="limits-section__muted">{t('rate.key.hint', { keys: keyCount })}</p>
      {fields.length > 0 ? (
        <div className="limits-keys" role="table" aria-label={t('rate.key.title')}>
          <div className="limits-keys__row limits-keys__head" role="row">
            <span role="columnheader">{t('rate.key.line')}</span>
            {LIMIT_FIELDS.map((f) => (
              <span key={f} role="columnheader">
                {t(`rate.short.${f}`)}
              </span>
            ))}
            <span role="columnheader" className="limits-keys__actions" />
          </div>
          {fields.map((field, index) => (
            <div
              key={field.id}
              className="limits-keys__row"
              role="row"
              aria-label={t('rate.key.row', { n: index + 1 })}
            >
              <span role="cell">
                <Input
                  type="number"
                  min={1}
                  max={Math.max(keyCount, 1)}
                  step={1}
                  aria-label={t('rate.key.line')}
                  {...register(`key_rows.${index}.line`, { valueAsNumber: true })}
                />
              </span>
              {LIMIT_FIELDS.map((f) => (
                <span key={f} role="cell">
                  <Input
                    type="number"
                    min={0}
                    step={1}
                    aria-label={t(`rate.field.${f}`)}
                    {...register(`key_rows.${index}.${f}`, { valueAsNumber: true })}
                  />
                </span>
              ))}
              <span role="cell" className="limits-keys__actions">
                <Button
                  variant="ghost"
                  size="sm"
                  aria-label={t('rate.key.remove')}
                  onClick={() => remove(index)}
                >
                  <X aria-hidden />
                </Button>
              </span>
            </div>
          ))}
        </div>
      ) : null}
      {messages.map((m) => (
        <p key={m} className="ui-field__error" role="alert">
          {t(m as ParseKeys<'limits'>, { max: Math.max(keyCount, 1), rows: MAX_KEY_ROWS })}
        </p>
      ))}
      <Button
        variant="secondary"
        size="sm"
        disabled={fields.length >= MAX_KEY_ROWS || keyCount === 0}
        onClick={() => append(newKeyRow(rows))}
      >
        <Plus aria-hidden />
        {t('rate.key.add')}
      </Button>
    </fieldset>
  );
}
