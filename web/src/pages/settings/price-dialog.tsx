import { useState } from 'react';
import type { FormEvent } from 'react';
import { useTranslation } from 'react-i18next';

import { Button } from '@/components/ui/button';
import {
  Dialog,
  DialogClose,
  DialogContent,
  DialogDescription,
  DialogFooter,
  DialogHeader,
  DialogTitle,
} from '@/components/ui/dialog';
import { Field } from '@/components/ui/field';
import { Input } from '@/components/ui/input';
import { Select } from '@/components/ui/select';

import { draftFromRow, PRICE_MODES, rowFromDraft } from './ratios';
import type { DraftErrors, PriceDraft, RatioRow } from './ratios';

export interface PriceDialogProps {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  title: string;
  description: string;
  /** The row edited (a new one has an empty name). */
  initial: RatioRow;
  /** The models priced at once; the name field is shown only when this is empty. */
  names: string[];
  /** Names another row already has. */
  taken: ReadonlySet<string>;
  /** Called with one row per model; the dialog closes when it resolves. */
  onSubmit: (rows: RatioRow[]) => Promise<void> | void;
  busy?: boolean;
}

/** A model's price: per token by ratio or by US$ per 1M tokens, or a fixed price per call. */
export function PriceDialog(props: PriceDialogProps) {
  return (
    <Dialog open={props.open} onOpenChange={props.onOpenChange}>
      <DialogContent side="right" size="narrow">
        <DialogHeader>
          <DialogTitle>{props.title}</DialogTitle>
          <DialogDescription>{props.description}</DialogDescription>
        </DialogHeader>
        {props.open ? <PriceForm key={props.initial.name} {...props} /> : null}
      </DialogContent>
    </Dialog>
  );
}

function PriceForm({ initial, names, taken, onSubmit, busy }: PriceDialogProps) {
  const { t } = useTranslation('settings');
  const [draft, setDraft] = useState<PriceDraft>(() => draftFromRow(initial));
  const [errors, setErrors] = useState<DraftErrors>({});
  const fixedNames = names.length > 0;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const checked = rowFromDraft(fixedNames ? { ...draft, name: names[0] ?? '' } : draft, taken);
    if ('errors' in checked) {
      setErrors(checked.errors);
      return;
    }
    setErrors({});
    const rows = fixedNames ? names.map((name) => ({ ...checked.row, name })) : [checked.row];
    void onSubmit(rows);
  };

  const input = (key: keyof PriceDraft, label: string, hint?: string) => {
    const id = `price-${key}`;
    const error = errors[key];
    return (
      <Field
        id={id}
        label={label}
        hint={hint}
        error={error ? t(`ratio.error.${error}`) : undefined}
      >
        <Input
          id={id}
          inputMode={key === 'name' ? undefined : 'decimal'}
          aria-invalid={error !== undefined}
          value={draft[key]}
          onChange={(e) => setDraft({ ...draft, [key]: e.target.value })}
        />
      </Field>
    );
  };

  return (
    <form className="settings__price-form" noValidate onSubmit={submit}>
      {fixedNames ? null : input('name', t('ratio.field.name'))}
      <Field id="price-mode" label={t('ratio.field.mode')}>
        <Select
          id="price-mode"
          value={draft.mode}
          onChange={(e) => setDraft({ ...draft, mode: e.target.value as PriceDraft['mode'] })}
        >
          {PRICE_MODES.map((mode) => (
            <option key={mode} value={mode}>
              {t(`ratio.mode.${mode}`)}
            </option>
          ))}
        </Select>
      </Field>
      {draft.mode === 'ratio' ? (
        <>
          {input('ratio', t('ratio.field.ratio'), t('ratio.hint.ratio'))}
          {input('completion', t('ratio.field.completion'), t('ratio.hint.completion'))}
          {input('cache', t('ratio.field.cache'), t('ratio.hint.cache'))}
        </>
      ) : draft.mode === 'tokenPrice' ? (
        <>
          {input('inputPrice', t('ratio.field.inputPrice'))}
          {input('outputPrice', t('ratio.field.outputPrice'), t('ratio.hint.outputPrice'))}
          {input('cache', t('ratio.field.cache'), t('ratio.hint.cache'))}
        </>
      ) : (
        input('price', t('ratio.field.price'), t('ratio.hint.price'))
      )}
      <DialogFooter>
        <DialogClose asChild>
          <Button type="button" variant="secondary">
            {t('ratio.cancel')}
          </Button>
        </DialogClose>
        <Button type="submit" disabled={busy}>
          {t('ratio.confirm')}
        </Button>
      </DialogFooter>
    </form>
  );
}
