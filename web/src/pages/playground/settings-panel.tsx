import { useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';

import { selfGroupsQueryOptions, userModelsQueryOptions } from '@/api/tokens';
import { Field } from '@/components/ui/field';
import { Input } from '@/components/ui/input';
import { Select } from '@/components/ui/select';

import type { PlaygroundParams } from './stream';

/** Temperature range and step (spec 02 §5). */
export const TEMPERATURE = { min: 0.1, max: 1, step: 0.1 } as const;

/** The left panel: group, model, temperature, max tokens and system prompt. */
export function SettingsPanel({
  params,
  onChange,
}: {
  params: PlaygroundParams;
  onChange: (patch: Partial<PlaygroundParams>) => void;
}) {
  const { t } = useTranslation('playground');
  const groups = useQuery(selfGroupsQueryOptions);
  const models = useQuery(userModelsQueryOptions);
  const modelList = models.data ?? [];
  return (
    <section className="playground__settings" aria-label={t('settings')}>
      <Field id="pg-group" label={t('group')}>
        <Select
          id="pg-group"
          value={params.group}
          onChange={(e) => onChange({ group: e.target.value })}
        >
          {Object.entries(groups.data ?? {}).map(([name, info]) => (
            <option key={name} value={name}>
              {info.desc ? `${name} (${info.desc})` : name}
            </option>
          ))}
          {params.group && !(groups.data && params.group in groups.data) ? (
            <option value={params.group}>{params.group}</option>
          ) : null}
        </Select>
      </Field>
      <Field
        id="pg-model"
        label={t('model')}
        error={models.isSuccess && modelList.length === 0 ? t('noModels') : undefined}
      >
        <Select
          id="pg-model"
          value={params.model}
          onChange={(e) => onChange({ model: e.target.value })}
        >
          {modelList.includes(params.model) || !params.model ? null : (
            <option value={params.model}>{params.model}</option>
          )}
          {modelList.map((m) => (
            <option key={m} value={m}>
              {m}
            </option>
          ))}
        </Select>
      </Field>
      <Field
        id="pg-temperature"
        label={`${t('temperature')}: ${
          params.temperature === null ? t('temperatureUnset') : params.temperature.toFixed(1)
        }`}
      >
        <input
          id="pg-temperature"
          type="range"
          className="playground__range"
          min={TEMPERATURE.min}
          max={TEMPERATURE.max}
          step={TEMPERATURE.step}
          value={params.temperature ?? TEMPERATURE.min}
          onChange={(e) => onChange({ temperature: Math.round(Number(e.target.value) * 10) / 10 })}
        />
      </Field>
      <Field id="pg-max-tokens" label={t('maxTokens')} hint={t('maxTokensHint')}>
        <Input
          id="pg-max-tokens"
          type="number"
          min={0}
          step={1}
          value={params.maxTokens}
          onChange={(e) =>
            onChange({ maxTokens: Math.max(0, Math.trunc(Number(e.target.value) || 0)) })
          }
        />
      </Field>
      <Field id="pg-system" label={t('systemPrompt')}>
        <textarea
          id="pg-system"
          className="ui-input playground__system"
          rows={5}
          value={params.systemPrompt}
          onChange={(e) => onChange({ systemPrompt: e.target.value })}
        />
      </Field>
    </section>
  );
}
