import { describe, expect, it } from 'vitest';

import { i18n } from '@/i18n';
import { fieldErrors } from '@/test/schema';

import { responseTone, typeLabel } from './constants';
import {
  batchTagSchema,
  channelFormSchema,
  isJsonObjectText,
  newChannelValues,
  tagEditSchema,
  toChannelPayload,
} from './schema';

const valid = { ...newChannelValues, name: 'a', key: 'sk-1', models: ['gpt-4o'] };

describe('channelFormSchema', () => {
  it('has the new-channel defaults of spec 02 §9', () => {
    expect(newChannelValues).toMatchObject({
      type: 1,
      auto_ban: true,
      groups: ['default'],
      priority: 0,
      weight: 0,
    });
  });

  it('accepts a complete new channel', () => {
    expect(fieldErrors(channelFormSchema(true), valid)).toEqual({});
  });

  it('needs a name, a key and a model on create', () => {
    expect(
      fieldErrors(channelFormSchema(true), { ...valid, name: '  ', key: ' ', models: [] }),
    ).toEqual({
      name: 'validation.nameRequired',
      key: 'validation.keyRequired',
      models: 'validation.modelsRequired',
    });
  });

  it('keeps the stored key when the key is empty on edit', () => {
    expect(fieldErrors(channelFormSchema(false), { ...valid, key: '' })).toEqual({});
    expect(fieldErrors(channelFormSchema(false), { ...valid, models: [] })).toEqual({
      models: 'validation.modelsRequired',
    });
  });

  it('needs valid JSON objects in the JSON fields (empty is fine)', () => {
    expect(
      fieldErrors(channelFormSchema(true), {
        ...valid,
        model_mapping: '{"a":',
        status_code_mapping: '[1]',
        param_override: 'null',
        setting: '"x"',
      }),
    ).toEqual({
      model_mapping: 'validation.json',
      status_code_mapping: 'validation.json',
      param_override: 'validation.json',
      setting: 'validation.json',
    });
    expect(
      fieldErrors(channelFormSchema(true), {
        ...valid,
        model_mapping: '{"gpt-4": "gpt-4o"}',
        status_code_mapping: ' ',
      }),
    ).toEqual({});
    expect(isJsonObjectText('{}')).toBe(true);
  });

  it('parses priority and weight as integers: priority ≥ -999, weight ≥ 0', () => {
    expect(
      fieldErrors(channelFormSchema(true), { ...valid, priority: 1.5, weight: Number.NaN }),
    ).toEqual({ priority: 'validation.integer', weight: 'validation.integer' });
    expect(fieldErrors(channelFormSchema(true), { ...valid, priority: -1000, weight: -1 })).toEqual(
      { priority: 'validation.priorityMin', weight: 'validation.weightMin' },
    );
    expect(fieldErrors(channelFormSchema(true), { ...valid, priority: -999, weight: 0 })).toEqual(
      {},
    );
  });
});

describe('toChannelPayload', () => {
  it('removes the trailing slash of base_url and sends lists as comma text', () => {
    const { channel, notices } = toChannelPayload({
      ...valid,
      base_url: 'https://api.example.com/',
      models: ['a', 'b'],
      groups: ['default', 'vip'],
    });
    expect(channel).toMatchObject({
      base_url: 'https://api.example.com',
      models: 'a,b',
      group: 'default,vip',
      auto_ban: 1,
      key: 'sk-1',
    });
    expect(channel).not.toHaveProperty('batch');
    expect(channel).not.toHaveProperty('groups');
    expect(notices).toEqual([]);
  });

  it('converts Chinese commas in the key, with a notice', () => {
    const { channel, notices } = toChannelPayload({ ...valid, key: 'k1，k2' });
    expect(channel.key).toBe('k1,k2');
    expect(notices).toEqual(['chineseComma']);
  });

  it('leaves an empty key out (keeps the stored one)', () => {
    expect(toChannelPayload({ ...valid, key: '' }).channel).not.toHaveProperty('key');
  });

  it("gives an empty other the type's default for it (Spark, type 18: v2.1)", () => {
    const spark = {
      fields: [
        {
          target: 'other' as const,
          key: '',
          name: 'model version',
          kind: 'text' as const,
          options: [],
          required: false,
          default: 'v2.1',
          label: 'typeField.apiVersion',
          help: '',
        },
      ],
    };
    expect(toChannelPayload({ ...valid, type: 18 }, spark).channel.other).toBe('v2.1');
    expect(toChannelPayload({ ...valid, type: 18, other: 'v3.5' }, spark).channel.other).toBe(
      'v3.5',
    );
    expect(toChannelPayload({ ...valid, type: 1 }, { fields: [] }).channel.other).toBe('');
    expect(toChannelPayload({ ...valid, type: 1 }).channel.other).toBe('');
  });

  it('sends auto_ban as 0 when off', () => {
    expect(toChannelPayload({ ...valid, auto_ban: false }).channel.auto_ban).toBe(0);
  });
});

describe('batchTagSchema', () => {
  it('needs selected channels and a non-empty tag', () => {
    expect(fieldErrors(batchTagSchema, { ids: [], tag: ' ' })).toEqual({
      ids: 'validation.selectToTag',
      tag: 'validation.tagRequired',
    });
    expect(fieldErrors(batchTagSchema, { ids: [1], tag: 'x' })).toEqual({});
  });
});

describe('tagEditSchema', () => {
  const none = { tag: 't', new_tag: '', model_mapping: '', models: [], groups: [] };
  it('needs at least one change', () => {
    expect(fieldErrors(tagEditSchema, none)).toEqual({ tag: 'validation.tagNoChange' });
    expect(fieldErrors(tagEditSchema, { ...none, weight: 0 })).toEqual({});
  });
  it('needs valid mapping JSON and integer priority and weight', () => {
    expect(
      fieldErrors(tagEditSchema, { ...none, model_mapping: '{', priority: 1.5, weight: -1 }),
    ).toEqual({
      model_mapping: 'validation.json',
      priority: 'validation.integer',
      weight: 'validation.weightMin',
    });
  });
});

describe('responseTone', () => {
  it('follows the badge thresholds of spec 02 §4', () => {
    expect([0, 1, 1000, 1001, 3000, 3001, 5000, 5001].map(responseTone)).toEqual([
      'untested',
      'green',
      'green',
      'lime',
      'lime',
      'yellow',
      'yellow',
      'red',
    ]);
  });
});

describe('typeLabel', () => {
  it('labels every type of spec 02 §3 in both languages', () => {
    const zh = i18n.getFixedT('zh', 'channels');
    const en = i18n.getFixedT('en', 'channels');
    const ids = [
      1, 2, 3, 4, 5, 8, 11, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 31, 33, 34, 35, 36,
      37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49,
    ];
    for (const id of ids) {
      expect(typeLabel(zh, id, 'server name'), `type ${id}`).not.toBe('server name');
      expect(typeLabel(en, id, 'server name'), `type ${id}`).not.toBe('server name');
    }
    expect(typeLabel(zh, 45)).toBe('字节火山方舟、豆包通用');
    expect(typeLabel(en, 45)).toBe('Volcano Ark / Doubao');
    expect(typeLabel(en, 1)).toBe('OpenAI');
    expect(typeLabel(en, 999)).toBe('999');
    expect(typeLabel(en, 999, 'New Provider')).toBe('New Provider');
  });
});
