import type { ParseKeys, TFunction } from 'i18next';
import type { UseFormRegister, UseFormSetValue } from 'react-hook-form';
import { useTranslation } from 'react-i18next';

import type { ChannelTypeInfo, TypeField } from '@/api/channel-types';
import { Field } from '@/components/ui/field';
import { Input } from '@/components/ui/input';
import { Select } from '@/components/ui/select';
import { Switch } from '@/components/ui/switch';

import type { ChannelFormValues } from './schema';

const key = (k: string) => k as ParseKeys<'channels'>;

/** The `setting` JSON text as an object ({} when empty or not an object). */
export function settingObject(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text || '{}');
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

/** `setting[name]` as text ("" when unset). */
export function settingText(text: string, name: string): string {
  const value = settingObject(text)[name];
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The `setting` JSON text with `name` set to `value` (removed when ""). */
function withSetting(text: string, name: string, value: string | boolean): string {
  const rest = Object.entries(settingObject(text)).filter(([k]) => k !== name);
  const object = Object.fromEntries(
    value === '' || value === false ? rest : [...rest, [name, value]],
  );
  return Object.keys(object).length === 0 ? '' : JSON.stringify(object);
}

/** The current value of an extra field in the form. */
export function fieldValue(values: Pick<ChannelFormValues, 'other' | 'setting'>, field: TypeField) {
  return field.target === 'other' ? values.other : settingText(values.setting, field.key);
}

/** The key hint of a type: its key format (or its free-form hint); none for plain keys. */
export function keyFormatHint(
  t: TFunction<'channels'>,
  row: ChannelTypeInfo | undefined,
  setting: string,
): string | undefined {
  if (!row) return undefined;
  const format = row.key_format;
  switch (format.kind) {
    case 'parts':
      return t('edit.keyFormat.parts', { format: format.parts.join('|') });
    case 'aws':
      return t('edit.keyFormat.aws');
    case 'service_account_json':
      // A key-type select set to API keys takes express-mode API keys, one per line.
      return settingText(setting, 'vertex_key_type') === 'api_key'
        ? t('edit.keyFormat.vertexApiKey')
        : t('edit.keyFormat.serviceAccountJson');
    default:
      return row.key_hint ? t(key(row.key_hint)) : undefined;
  }
}

/**
 * The type-specific inputs of the channel editor, rendered from the server's field descriptors:
 * the field stored in `other` is a text input bound to `other`; `setting` fields edit their key
 * of the `setting` JSON text.
 */
export function TypeFields({
  row,
  values,
  register,
  setValue,
  errors,
}: {
  row: ChannelTypeInfo;
  values: Pick<ChannelFormValues, 'other' | 'setting'>;
  register: UseFormRegister<ChannelFormValues>;
  setValue: UseFormSetValue<ChannelFormValues>;
  errors: { other?: string; setting?: string };
}) {
  const { t } = useTranslation('channels');
  const setSetting = (name: string, value: string | boolean) =>
    setValue('setting', withSetting(values.setting, name, value), {
      shouldValidate: true,
      shouldDirty: true,
    });
  return row.fields.map((field) => {
    const id = field.target === 'other' ? 'channel-other' : `channel-setting-${field.key}`;
    const label = t(key(field.label));
    const hint = field.help ? t(key(field.help)) : undefined;
    if (field.target === 'other') {
      return (
        <Field key={id} id={id} label={label} hint={hint} error={errors.other}>
          <Input
            id={id}
            autoComplete="off"
            placeholder={field.default}
            aria-required={field.required}
            {...register('other')}
          />
        </Field>
      );
    }
    const current = fieldValue(values, field);
    if (field.kind === 'bool') {
      return (
        <label key={id} className="channels__switch">
          <Switch
            checked={current === 'true'}
            onCheckedChange={(on) => setSetting(field.key, on)}
            aria-label={label}
          />
          {label}
        </label>
      );
    }
    return (
      <Field key={id} id={id} label={label} hint={hint} error={errors.setting}>
        {field.kind === 'select' ? (
          <Select
            id={id}
            value={current || field.default}
            onChange={(e) => setSetting(field.key, e.target.value)}
          >
            {field.options.map((option) => (
              <option key={option} value={option}>
                {t(key(`typeField.option.${option}`), { defaultValue: option })}
              </option>
            ))}
          </Select>
        ) : (
          <Input
            id={id}
            autoComplete="off"
            placeholder={field.default}
            value={current}
            onChange={(e) => setSetting(field.key, e.target.value)}
          />
        )}
      </Field>
    );
  });
}
