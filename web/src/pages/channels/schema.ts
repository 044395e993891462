import type { ParseKeys } from 'i18next';
import { z } from 'zod/mini';

import type { ChannelTypeInfo } from '@/api/channel-types';

/** Error messages are i18n keys of the `channels` namespace. */
const message = (key: ParseKeys<'channels'>) => key;

/** Lowest priority the server accepts. */
export const MIN_PRIORITY = -999;

/** Empty, or JSON text of an object. */
export function isJsonObjectText(text: string): boolean {
  if (text.trim() === '') return true;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

const jsonText = z
  .string()
  .check(z.refine(isJsonObjectText, { message: message('validation.json') }));

export const prioritySchema = z
  .int(message('validation.integer'))
  .check(z.gte(MIN_PRIORITY, message('validation.priorityMin')));
export const weightSchema = z
  .int(message('validation.integer'))
  .check(z.gte(0, message('validation.weightMin')));

/**
 * The channel editor (spec 02 §5): name and key are required on create (an empty key on edit
 * keeps the stored one), at least one model, JSON fields must be JSON objects, priority an
 * integer ≥ -999 and weight an integer ≥ 0.
 */
export function channelFormSchema(creating: boolean) {
  return z.object({
    type: z.int(),
    name: z.string().check(z.trim(), z.minLength(1, message('validation.nameRequired'))),
    base_url: z.string().check(z.trim()),
    key: z.string().check(
      z.refine((k) => !creating || k.trim() !== '', {
        message: message('validation.keyRequired'),
      }),
    ),
    batch: z.boolean(),
    models: z.array(z.string()).check(z.minLength(1, message('validation.modelsRequired'))),
    groups: z.array(z.string()),
    model_mapping: jsonText,
    status_code_mapping: jsonText,
    param_override: jsonText,
    setting: jsonText,
    priority: prioritySchema,
    weight: weightSchema,
    max_input_tokens: z
      .int(message('validation.integer'))
      .check(z.gte(0, message('validation.maxInputTokensMin'))),
    tag: z.string().check(z.trim()),
    auto_ban: z.boolean(),
    test_model: z.string().check(z.trim()),
    proxy: z.string().check(z.trim()),
    openai_organization: z.string().check(z.trim()),
    other: z.string().check(z.trim()),
  });
}
export type ChannelFormValues = z.infer<ReturnType<typeof channelFormSchema>>;

/** The new-channel defaults (spec 02 §9): type 1, auto_ban on, group default, priority and weight 0. */
export const newChannelValues: ChannelFormValues = {
  type: 1,
  name: '',
  base_url: '',
  key: '',
  batch: false,
  models: [],
  groups: ['default'],
  model_mapping: '',
  status_code_mapping: '',
  param_override: '',
  setting: '',
  priority: 0,
  weight: 0,
  max_input_tokens: 0,
  tag: '',
  auto_ban: true,
  test_model: '',
  proxy: '',
  openai_organization: '',
  other: '',
};

export type ChannelNotice = 'chineseComma';

/**
 * Valid form values → the body of POST/PUT /api/channel/: the trailing slash of base_url is
 * removed, Chinese commas in the key become English ones (with a notice), an empty `other` gets
 * the type's default for it (`row`'s descriptor; e.g. Spark's v2.1), models and groups go as
 * comma text, an empty key is left out.
 */
export function toChannelPayload(
  values: ChannelFormValues,
  row?: Pick<ChannelTypeInfo, 'fields'>,
): {
  channel: Record<string, unknown>;
  notices: ChannelNotice[];
} {
  const notices: ChannelNotice[] = [];
  let key = values.key.trim();
  if (key.includes('，')) {
    key = key.replaceAll('，', ',');
    notices.push('chineseComma');
  }
  const { groups, models, auto_ban, ...rest } = values;
  const channel: Record<string, unknown> = {
    ...rest,
    base_url: values.base_url.replace(/\/+$/, ''),
    other:
      values.other === ''
        ? (row?.fields.find((f) => f.target === 'other')?.default ?? '')
        : values.other,
    models: models.join(','),
    group: groups.join(','),
    auto_ban: auto_ban ? 1 : 0,
  };
  delete channel.batch;
  if (key === '') delete channel.key;
  else channel.key = key;
  return { channel, notices };
}

/** Batch tag (spec 02 §5): needs selected channels and a non-empty tag. */
export const batchTagSchema = z.object({
  ids: z.array(z.int()).check(z.minLength(1, message('validation.selectToTag'))),
  tag: z.string().check(z.trim(), z.minLength(1, message('validation.tagRequired'))),
});

/** The tag editor: at least one change; mapping must be JSON; priority/weight integers when set. */
export const tagEditSchema = z
  .object({
    tag: z.string(),
    new_tag: z.string().check(z.trim()),
    model_mapping: jsonText,
    models: z.array(z.string()),
    groups: z.array(z.string()),
    priority: z.optional(prioritySchema),
    weight: z.optional(weightSchema),
  })
  .check(
    z.refine(
      (v) =>
        v.new_tag !== '' ||
        v.model_mapping.trim() !== '' ||
        v.models.length > 0 ||
        v.groups.length > 0 ||
        v.priority !== undefined ||
        v.weight !== undefined,
      { message: message('validation.tagNoChange'), path: ['tag'] },
    ),
  );
export type TagEditValues = z.infer<typeof tagEditSchema>;
