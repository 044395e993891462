import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';

import { LIMIT_FIELDS, limitsQueryOptions, saveLimits } from '@/api/limits';
import type { LimitField, LimitsOwner, OwnerLimits } from '@/api/limits';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Field } from '@/components/ui/field';
import { Input } from '@/components/ui/input';
import { Spinner } from '@/components/ui/spinner';
import { toast } from '@/stores/toasts';

import './limits.css';

/**
 * The rate-limit section of the token, user and channel editors (P15): requests at once, per
 * minute and per day, tokens per minute (0 = none). A channel's per-key limits are kept as
 * they are (set through the API).
 */
export function LimitsSection({ owner }: { owner: LimitsOwner }) {
  const { t } = useTranslation('limits');
  const query = useQuery(limitsQueryOptions(owner));
  return (
    <section className="limits-section" aria-labelledby={`limits-${owner.kind}-${owner.id}`}>
      <h3 id={`limits-${owner.kind}-${owner.id}`} className="limits-section__title">
        {t('rate.title')}
      </h3>
      <p className="limits-section__note">{t('rate.description')}</p>
      {query.isError && !query.data ? (
        <Alert tone="danger">{t('rate.loadFailed')}</Alert>
      ) : !query.data ? (
        <Spinner label={t('loading')} />
      ) : (
        <LimitsForm key={JSON.stringify(query.data)} owner={owner} limits={query.data} />
      )}
    </section>
  );
}

function LimitsForm({ owner, limits }: { owner: LimitsOwner; limits: OwnerLimits }) {
  const { t } = useTranslation('limits');
  const queryClient = useQueryClient();
  const [values, setValues] = useState<Record<LimitField, string>>(() => ({
    concurrency_limit: String(limits.concurrency_limit),
    rpm_limit: String(limits.rpm_limit),
    tpm_limit: String(limits.tpm_limit),
    rpd_limit: String(limits.rpd_limit),
  }));
  const invalid = LIMIT_FIELDS.filter((f) => !/^\d+$/.test(values[f].trim()));
  const save = useMutation({
    mutationFn: () =>
      saveLimits(owner, {
        ...limits,
        concurrency_limit: Number(values.concurrency_limit),
        rpm_limit: Number(values.rpm_limit),
        tpm_limit: Number(values.tpm_limit),
        rpd_limit: Number(values.rpd_limit),
      }),
    onSuccess: (saved) => {
      queryClient.setQueryData(limitsQueryOptions(owner).queryKey, saved);
      toast.success(t('rate.saved'));
    },
  });
  const id = `limits-${owner.kind}-${owner.id}`;
  return (
    <div className="limits-form" role="group" aria-label={t('rate.formLabel')}>
      {LIMIT_FIELDS.map((field) => (
        <Field
          key={field}
          id={`${id}-${field}`}
          label={t(`rate.field.${field}`)}
          error={invalid.includes(field) ? t('rate.validation') : undefined}
        >
          <Input
            id={`${id}-${field}`}
            type="number"
            min={0}
            step={1}
            value={values[field]}
            onChange={(e) => setValues({ ...values, [field]: e.target.value })}
          />
        </Field>
      ))}
      <div className="limits-form__actions">
        <Button disabled={save.isPending || invalid.length > 0} onClick={() => save.mutate()}>
          {t('rate.save')}
        </Button>
      </div>
    </div>
  );
}
