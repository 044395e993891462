import { zodResolver } from '@hookform/resolvers/zod';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ParseKeys } from 'i18next';
import { Plus, X } from 'lucide-react';
import { Controller, useFieldArray, useForm, useFormState, useWatch } from 'react-hook-form';
import type { Control, UseFormRegister } from 'react-hook-form';
import { useTranslation } from 'react-i18next';

import { budgetQueryOptions, MAX_WINDOWS, saveBudget } from '@/api/budgets';
import type { BudgetOwner, BudgetView } from '@/api/budgets';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Field } from '@/components/ui/field';
import { Input } from '@/components/ui/input';
import { Select } from '@/components/ui/select';
import { Spinner } from '@/components/ui/spinner';
import { Switch } from '@/components/ui/switch';
import { formatTimestamp } from '@/lib/time';
import { useFormatQuota } from '@/lib/use-format-quota';
import { toast } from '@/stores/toasts';

import {
  budgetFormSchema,
  budgetValues,
  toBudgets,
  WINDOW_KINDS,
  windowKind,
} from './budget-schema';
import type { BudgetFormValues } from './budget-schema';

import './limits.css';

/**
 * The budget section of the token editor and the user editor (P15): the windows in force with
 * what is spent and left in each, and the form that sets the windows (calendar or rolling,
 * several at once) and a temporary override with its expiry.
 */
export function BudgetSection({ owner }: { owner: BudgetOwner }) {
  const { t } = useTranslation('limits');
  const view = useQuery(budgetQueryOptions(owner));
  return (
    <section className="limits-section" aria-labelledby={`budget-${owner.kind}-${owner.id}`}>
      <h3 id={`budget-${owner.kind}-${owner.id}`} className="limits-section__title">
        {t('budget.title')}
      </h3>
      <p className="limits-section__note">{t(`budget.description.${owner.kind}`)}</p>
      {view.isError && !view.data ? (
        <Alert tone="danger">{t('budget.loadFailed')}</Alert>
      ) : !view.data ? (
        <Spinner label={t('loading')} />
      ) : (
        <>
          <WindowsInForce view={view.data} />
          <BudgetForm key={JSON.stringify(view.data.budgets)} owner={owner} view={view.data} />
        </>
      )}
    </section>
  );
}

function WindowsInForce({ view }: { view: BudgetView }) {
  const { t } = useTranslation('limits');
  const formatQuota = useFormatQuota();
  if (view.windows.length === 0) {
    return <p className="limits-section__muted">{t('budget.none')}</p>;
  }
  return (
    <table className="limits-table" aria-label={t('budget.inForce')}>
      <thead>
        <tr>
          <th scope="col">{t('budget.column.window')}</th>
          <th scope="col">{t('budget.column.limit')}</th>
          <th scope="col">{t('budget.column.spent')}</th>
          <th scope="col">{t('budget.column.remaining')}</th>
          <th scope="col">{t('budget.column.resets', { zone: view.time_zone })}</th>
        </tr>
      </thead>
      <tbody>
        {view.windows.map((w) => (
          <tr key={windowKind(w)} data-state={w.remaining === 0 ? 'reached' : undefined}>
            <th scope="row">{t(`budget.kind.${windowKind(w)}`)}</th>
            <td>{formatQuota(w.limit)}</td>
            <td>{formatQuota(w.spent)}</td>
            <td>{formatQuota(w.remaining)}</td>
            <td>{formatTimestamp(w.resets_at)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function BudgetForm({ owner, view }: { owner: BudgetOwner; view: BudgetView }) {
  const { t } = useTranslation('limits');
  const queryClient = useQueryClient();
  const {
    register,
    handleSubmit,
    control,
    formState: { errors },
  } = useForm<BudgetFormValues>({
    resolver: zodResolver(budgetFormSchema),
    defaultValues: budgetValues(view.budgets),
  });
  const overrideOn = useWatch({ control, name: 'override_on' });
  const save = useMutation({
    mutationFn: (values: BudgetFormValues) => saveBudget(owner, toBudgets(values)),
    onSuccess: (saved) => {
      queryClient.setQueryData(budgetQueryOptions(owner).queryKey, saved);
      toast.success(t('budget.saved'));
    },
  });
  const message = (key: string | undefined) => (key ? t(key as ParseKeys<'limits'>) : undefined);
  const id = `budget-${owner.kind}-${owner.id}`;

  return (
    <div className="limits-form" role="group" aria-label={t('budget.formLabel')}>
      <WindowRows
        name="windows"
        legend={t('budget.windows')}
        control={control}
        register={register}
      />
      <label className="limits-form__switch">
        <Controller
          control={control}
          name="override_on"
          render={({ field }) => (
            <Switch
              checked={field.value}
              onCheckedChange={field.onChange}
              aria-label={t('budget.override.on')}
            />
          )}
        />
        {t('budget.override.on')}
      </label>
      {overrideOn ? (
        <>
          <p className="limits-section__note">{t('budget.override.hint')}</p>
          <WindowRows
            name="override_windows"
            legend={t('budget.override.windows')}
            control={control}
            register={register}
          />
          <Field
            id={`${id}-until`}
            label={t('budget.override.until')}
            error={message(errors.override_until?.message)}
          >
            <Input id={`${id}-until`} type="datetime-local" {...register('override_until')} />
          </Field>
        </>
      ) : null}
      <div className="limits-form__actions">
        <Button
          disabled={save.isPending}
          onClick={() => void handleSubmit((values) => save.mutate(values))()}
        >
          {t('budget.save')}
        </Button>
      </div>
    </div>
  );
}

/** The first row error of a window list (each row's limit or kind). */
function fieldsError(
  list:
    | { [index: number]: { limit?: { message?: string }; kind?: { message?: string } } | undefined }
    | undefined,
): string | undefined {
  if (!list) return undefined;
  for (let i = 0; i < MAX_WINDOWS + 1; i++) {
    const row = list[i];
    const found = row?.limit?.message ?? row?.kind?.message;
    if (found) return found;
  }
  return undefined;
}

function WindowRows({
  name,
  legend,
  control,
  register,
}: {
  name: 'windows' | 'override_windows';
  legend: string;
  control: Control<BudgetFormValues>;
  register: UseFormRegister<BudgetFormValues>;
}) {
  const { t } = useTranslation('limits');
  const { errors } = useFormState({ control, name });
  const listErrors = errors[name];
  const key = listErrors?.message ?? listErrors?.root?.message ?? fieldsError(listErrors);
  const error = key ? t(key as ParseKeys<'limits'>) : undefined;
  const formatQuota = useFormatQuota();
  const { fields, append, remove } = useFieldArray({ control, name });
  const rows = useWatch({ control, name });
  const unused = WINDOW_KINDS.find((k) => !rows.some((r) => r.kind === k)) ?? 'day';
  return (
    <fieldset className="limits-rows">
      <legend>{legend}</legend>
      {fields.length === 0 ? (
        <p className="limits-section__muted">{t('budget.noWindows')}</p>
      ) : null}
      {fields.map((field, index) => {
        const limit = rows[index]?.limit;
        return (
          <div key={field.id} className="limits-rows__row">
            <Select aria-label={t('budget.column.window')} {...register(`${name}.${index}.kind`)}>
              {WINDOW_KINDS.map((kind) => (
                <option key={kind} value={kind}>
                  {t(`budget.kind.${kind}`)}
                </option>
              ))}
            </Select>
            <Input
              type="number"
              min={1}
              step={1}
              aria-label={t('budget.column.limit')}
              {...register(`${name}.${index}.limit`, { valueAsNumber: true })}
            />
            <span className="limits-rows__amount">
              {Number.isInteger(limit) ? formatQuota(limit ?? 0) : ''}
            </span>
            <Button
              variant="ghost"
              size="sm"
              aria-label={t('budget.remove')}
              onClick={() => remove(index)}
            >
              <X aria-hidden />
            </Button>
          </div>
        );
      })}
      {error ? (
        <p className="ui-field__error" role="alert">
          {error}
        </p>
      ) : null}
      <Button
        variant="secondary"
        size="sm"
        disabled={fields.length >= MAX_WINDOWS}
        onClick={() => append({ kind: unused, limit: 500_000 })}
      >
        <Plus aria-hidden />
        {t('budget.add')}
      </Button>
    </fieldset>
  );
}
