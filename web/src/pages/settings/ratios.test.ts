import { describe, expect, it } from 'vitest';

import {
  changedOptions,
  draftFromRow,
  optionsFromRows,
  rowFromDraft,
  rowsFromOptions,
  upsertRows,
} from './ratios';
import type { PriceDraft } from './ratios';

const options = {
  ModelRatio: '{"gpt-4o": 1.25, "b-model": 2}',
  CompletionRatio: '{\n  "gpt-4o": 4\n}',
  CacheRatio: '{"gpt-4o": 0.5, "bad": "x"}',
  ModelPrice: '{"mj_imagine": 0.1}',
};

const draft = (over: Partial<PriceDraft>): PriceDraft => ({
  ...draftFromRow({ name: 'm' }),
  ...over,
});

describe('price options ⇄ rows', () => {
  it('joins the four maps by model, skipping values that are not numbers', () => {
    expect(rowsFromOptions(options)).toEqual([
      { name: 'b-model', ratio: 2 },
      { name: 'gpt-4o', ratio: 1.25, completion: 4, cache: 0.5 },
      { name: 'mj_imagine', price: 0.1 },
    ]);
    expect(rowsFromOptions({ ModelRatio: 'not json' })).toEqual([]);
  });

  it('writes the maps back and reports only the options whose content changed', () => {
    const rows = rowsFromOptions(options);
    // Re-serialising (other spacing) is no change.
    expect(changedOptions(options, rows)).toEqual([]);
    const next = upsertRows(rows, [{ name: 'b-model', ratio: 3, completion: 2 }]);
    const changed = changedOptions(options, next);
    expect(changed.map(([key]) => key)).toEqual(['ModelRatio', 'CompletionRatio']);
    expect(JSON.parse(optionsFromRows(next).ModelRatio)).toEqual({ 'b-model': 3, 'gpt-4o': 1.25 });
    // Deleting a row removes it from every map.
    const without = next.filter((r) => r.name !== 'gpt-4o');
    expect(JSON.parse(optionsFromRows(without).CacheRatio)).toEqual({});
  });
});

describe('the price draft', () => {
  it('needs a name, numbers and a name no other row has', () => {
    expect(rowFromDraft(draft({ name: '', ratio: 'x' }), new Set())).toEqual({
      errors: { name: 'required', ratio: 'notNumber' },
    });
    expect(rowFromDraft(draft({ name: 'a', ratio: '1' }), new Set(['a']))).toEqual({
      errors: { name: 'duplicate' },
    });
    expect(rowFromDraft(draft({ ratio: '-1' }), new Set())).toEqual({
      errors: { ratio: 'negative' },
    });
    expect(rowFromDraft(draft({ ratio: '' }), new Set())).toEqual({
      errors: { ratio: 'required' },
    });
  });

  it('per call keeps only the price; per token only the ratios', () => {
    const row = { name: 'm', ratio: 2, completion: 3, cache: 0.5 };
    expect(rowFromDraft({ ...draftFromRow(row), mode: 'call', price: '0.02' }, new Set())).toEqual({
      row: { name: 'm', price: 0.02 },
    });
    const priced = draftFromRow({ name: 'm', price: 0.1 });
    expect(priced.mode).toBe('call');
    expect(rowFromDraft({ ...priced, mode: 'ratio', ratio: '1.5' }, new Set())).toEqual({
      row: { name: 'm', ratio: 1.5 },
    });
  });

  it('converts US$ per 1M tokens to ratios (÷ 2, output ÷ input)', () => {
    const d = draft({ mode: 'tokenPrice', inputPrice: '2.5', outputPrice: '10' });
    expect(rowFromDraft(d, new Set())).toEqual({ row: { name: 'm', ratio: 1.25, completion: 4 } });
    expect(draftFromRow({ name: 'm', ratio: 1.25, completion: 4 })).toMatchObject({
      inputPrice: '2.5',
      outputPrice: '10',
    });
    const zero = draft({ mode: 'tokenPrice', inputPrice: '0', outputPrice: '10' });
    expect(rowFromDraft(zero, new Set())).toEqual({ errors: { inputPrice: 'priceZero' } });
  });
});
