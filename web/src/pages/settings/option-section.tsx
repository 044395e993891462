import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { FormEvent, ReactNode } from 'react';
import { useTranslation } from 'react-i18next';

import { updateOption } from '@/api/options';
import type { Options } from '@/api/options';
import { Button } from '@/components/ui/button';
import { Card, CardContent, CardFooter, CardHeader, CardTitle } from '@/components/ui/card';
import { Field } from '@/components/ui/field';
import { Input } from '@/components/ui/input';
import { Select } from '@/components/ui/select';
import { Switch } from '@/components/ui/switch';
import { toast } from '@/stores/toasts';

import { bounds, checkField, labelId, normalizeValue } from './fields';
import type { FieldDef, FieldError } from './fields';

/** The text a field starts from: the stored value, JSON pretty-printed. */
function initialText(field: FieldDef, options: Options): string {
  const value = options[field.key] ?? '';
  if (field.kind.type !== 'json') return value;
  try {
    return JSON.stringify(JSON.parse(value), null, 2);
  } catch {
    return value;
  }
}

/** Saves each changed key with PUT /api/option/; says how many failed. */
async function saveChanged(changed: [string, string][]): Promise<number> {
  const results = await Promise.allSettled(changed.map(([key, value]) => updateOption(key, value)));
  return results.filter((r) => r.status === 'rejected').length;
}

export interface OptionSectionProps {
  /** The section id: its title is `section.<id>`. */
  id: string;
  title: string;
  fields: FieldDef[];
  options: Options;
  /** A section-wide condition checked before saving: the error text, or null. */
  precheck?: () => string | null;
  /** Rendered after the save button's form (e.g. the log clearing tool). */
  children?: ReactNode;
  /** Controls beside the save button that read and fill the unsaved form (OIDC discovery). */
  tools?: (form: SectionForm) => ReactNode;
  /**
   * Shown, not edited (an admin who is not root): only the fields the server sent, disabled,
   * with no save button; a section with none of them is left out.
   */
  readOnly?: boolean;
}

/** The unsaved values of a section, for its {@link OptionSectionProps.tools}. */
export interface SectionForm {
  draft: Readonly<Record<string, string>>;
  /** Sets some fields' unsaved values (saved with the section's button). */
  fill: (values: Record<string, string>) => void;
}

/**
 * One settings section: its options as a form saved together. Only changed keys are sent; an
 * unchanged form says so; a bad value blocks the save (spec 02 §5, §8).
 */
export function OptionSection({
  id,
  title,
  fields: allFields,
  options,
  precheck,
  children,
  tools,
  readOnly = false,
}: OptionSectionProps) {
  const fields = readOnly ? allFields.filter((f) => f.key in options) : allFields;
  const { t } = useTranslation('settings');
  const queryClient = useQueryClient();
  const initial = () => Object.fromEntries(fields.map((f) => [f.key, initialText(f, options)]));
  const [draft, setDraft] = useState<Record<string, string>>(initial);
  const [saved, setSaved] = useState<Record<string, string>>(initial);
  const [errors, setErrors] = useState<Record<string, FieldError>>({});

  const save = useMutation({
    mutationFn: saveChanged,
    meta: { silent: true },
    onSuccess: (failed, changed) => {
      if (failed === 0) {
        toast.success(t('toast.saved'));
        // Secrets are write-only: once sent, their fields go back to empty.
        const secrets = Object.fromEntries(
          fields.filter((f) => f.kind.type === 'secret').map((f) => [f.key, '']),
        );
        setSaved({ ...saved, ...Object.fromEntries(changed), ...secrets });
        setDraft((d) => ({ ...d, ...Object.fromEntries(changed), ...secrets }));
      } else {
        toast.error(failed === changed.length ? t('toast.saveFailed') : t('toast.partialFailed'));
      }
      void queryClient.invalidateQueries({ queryKey: ['options'] });
      void queryClient.invalidateQueries({ queryKey: ['status'] });
    },
    onError: () => toast.error(t('toast.saveFailed')),
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const value = (f: FieldDef) => normalizeValue(f.kind, draft[f.key] ?? '');
    const changed = fields.filter((f) => value(f) !== saved[f.key]);
    if (changed.length === 0) {
      toast.info(t('toast.noChanges'));
      return;
    }
    const found = Object.fromEntries(changed.map((f) => [f.key, checkField(f.kind, value(f))]));
    setErrors(found);
    if (Object.values(found).some((e) => e !== null)) {
      toast.error(t('toast.checkInput'));
      return;
    }
    const blocked = precheck?.();
    if (blocked) {
      toast.error(blocked);
      return;
    }
    save.mutate(changed.map((f) => [f.key, value(f)]));
  };

  const control = (field: FieldDef, inputId: string, error: FieldError) => {
    const value = draft[field.key] ?? '';
    const set = (next: string) => setDraft({ ...draft, [field.key]: next });
    const invalid = error !== null && error !== undefined;
    switch (field.kind.type) {
      case 'bool':
        return (
          <Switch
            id={inputId}
            checked={value === 'true'}
            onCheckedChange={(on) => set(on ? 'true' : 'false')}
          />
        );
      case 'int':
      case 'float':
        return (
          <Input
            id={inputId}
            type="number"
            step={field.kind.type === 'float' ? (field.kind.step ?? 'any') : 1}
            aria-invalid={invalid}
            value={value}
            onChange={(e) => set(e.target.value)}
          />
        );
      case 'choice':
        return (
          <Select id={inputId} value={value} onChange={(e) => set(e.target.value)}>
            {field.kind.choices.map((c) => (
              <option key={c} value={c}>
                {t(`choice.${c}` as 'choice.hour')}
              </option>
            ))}
          </Select>
        );
      case 'lines':
      case 'json':
        return (
          <textarea
            id={inputId}
            className="ui-input settings__code"
            rows={field.kind.type === 'json' ? 6 : 4}
            spellCheck={false}
            aria-invalid={invalid}
            value={value}
            onChange={(e) => set(e.target.value)}
          />
        );
      case 'secret':
        return (
          <Input
            id={inputId}
            type="password"
            autoComplete="new-password"
            placeholder={t('secretPlaceholder')}
            value={value}
            onChange={(e) => set(e.target.value)}
          />
        );
      case 'text':
      case 'url':
      case 'httpUrl':
        return (
          <Input
            id={inputId}
            type={field.kind.type === 'text' ? 'text' : 'url'}
            aria-invalid={invalid}
            value={value}
            onChange={(e) => set(e.target.value)}
          />
        );
    }
  };

  if (readOnly && fields.length === 0) return null;
  return (
    <Card className="settings__section" aria-labelledby={`settings-${id}-title`}>
      <CardHeader>
        <CardTitle id={`settings-${id}-title`}>{title}</CardTitle>
      </CardHeader>
      <form onSubmit={submit} noValidate>
        <fieldset className="settings__fieldset" disabled={readOnly}>
          <CardContent className="settings__fields">
            {fields.map((field) => {
              const inputId = `option-${labelId(field.key)}`;
              const error = errors[field.key] ?? null;
              const label = t(`field.${labelId(field.key)}` as 'field.LogConsumeEnabled');
              const hintKey = `hint.${labelId(field.key)}`;
              const hint = t(hintKey as 'hint.LogRetentionDays', { defaultValue: '' });
              return (
                <div
                  key={field.key}
                  className="settings__field"
                  data-kind={field.kind.type}
                  data-wide={field.kind.type === 'json' || field.kind.type === 'lines' || undefined}
                >
                  <Field
                    id={inputId}
                    label={label}
                    hint={hint || undefined}
                    error={error ? t(`validation.${error}`, bounds(field.kind)) : undefined}
                  >
                    {control(field, inputId, error)}
                  </Field>
                </div>
              );
            })}
          </CardContent>
        </fieldset>
        {readOnly ? null : (
          <CardFooter>
            {tools?.({ draft, fill: (values) => setDraft((d) => ({ ...d, ...values })) })}
            <Button type="submit" disabled={save.isPending}>
              {t('save', { section: title })}
            </Button>
          </CardFooter>
        )}
      </form>
      {children}
    </Card>
  );
}
