import { QUOTA_PER_CALL } from '@/api/pricing';
import type { PricingModel } from '@/api/pricing';

export const currencies = ['CNY', 'USD'] as const;
export type Currency = (typeof currencies)[number];

/** US$ prices of a model in one group (spec 02 §9). */
export type ModelPrice =
  | { kind: 'tokens'; input: number; output: number }
  | { kind: 'call'; perCall: number }
  | { kind: 'unset' };

/**
 * Per 1M tokens: prompt = model ratio × 2 × group ratio, completion = that × completion ratio;
 * per call: model_price × group ratio (spec 02 §9).
 */
export function modelPrice(model: PricingModel, groupRatio: number): ModelPrice {
  if (!model.price_set) return { kind: 'unset' };
  if (model.quota_type === QUOTA_PER_CALL) {
    return { kind: 'call', perCall: model.model_price * groupRatio };
  }
  const input = model.model_ratio * 2 * groupRatio;
  return { kind: 'tokens', input, output: input * model.completion_ratio };
}

/**
 * A US$ amount in the chosen currency: CNY multiplies by the price ratio (the status's `price`).
 * At most 4 decimals, at least 2.
 */
export function formatPrice(usd: number, currency: Currency, priceRatio: number): string {
  const amount = currency === 'CNY' ? usd * priceRatio : usd;
  const symbol = currency === 'CNY' ? '¥' : '$';
  const fixed = amount.toFixed(4).replace(/0{1,2}$/, '');
  return `${symbol}${fixed}`;
}

/** A provider of the filter bar: models whose name starts with one of `prefixes`. */
export interface Provider {
  id: string;
  name: string;
  prefixes: readonly string[];
}

/** Built-in providers (the admin's provider list is not part of the API yet). */
export const providers: readonly Provider[] = [
  {
    id: 'openai',
    name: 'OpenAI',
    prefixes: [
      'gpt-',
      'chatgpt',
      'o1',
      'o3',
      'o4',
      'text-',
      'dall-e',
      'whisper',
      'tts-',
      'davinci',
      'babbage',
      'omni-',
    ],
  },
  { id: 'anthropic', name: 'Anthropic', prefixes: ['claude'] },
  {
    id: 'google',
    name: 'Google',
    prefixes: ['gemini', 'gemma', 'imagen', 'palm', 'text-bison', 'chat-bison'],
  },
  { id: 'deepseek', name: 'DeepSeek', prefixes: ['deepseek'] },
  { id: 'qwen', name: '通义千问', prefixes: ['qwen', 'qwq', 'qvq'] },
  { id: 'zhipu', name: '智谱', prefixes: ['glm', 'chatglm', 'cogview'] },
  { id: 'moonshot', name: 'Moonshot', prefixes: ['moonshot', 'kimi'] },
  { id: 'doubao', name: '豆包', prefixes: ['doubao'] },
  { id: 'baidu', name: '文心', prefixes: ['ernie'] },
  { id: 'hunyuan', name: '混元', prefixes: ['hunyuan'] },
  { id: 'spark', name: '星火', prefixes: ['spark'] },
  { id: 'minimax', name: 'MiniMax', prefixes: ['abab', 'minimax'] },
  { id: 'yi', name: '零一万物', prefixes: ['yi-'] },
  {
    id: 'mistral',
    name: 'Mistral',
    prefixes: ['mistral', 'mixtral', 'codestral', 'pixtral', 'ministral'],
  },
  { id: 'xai', name: 'xAI', prefixes: ['grok'] },
  { id: 'meta', name: 'Meta', prefixes: ['llama', 'meta-llama'] },
  { id: 'cohere', name: 'Cohere', prefixes: ['command', 'embed-', 'rerank-'] },
];

/** The provider id of a model: the longest matching prefix wins; `other` when none. */
export function providerOf(modelName: string): string {
  const name = modelName.toLowerCase();
  let best: { id: string; length: number } | null = null;
  for (const provider of providers) {
    for (const prefix of provider.prefixes) {
      if (name.startsWith(prefix) && (!best || prefix.length > best.length)) {
        best = { id: provider.id, length: prefix.length };
      }
    }
  }
  return best?.id ?? OTHER_PROVIDER;
}

/** The id of models no provider claims (shown as 其他). */
export const OTHER_PROVIDER = 'other';
/** The all-providers filter (全部). */
export const ALL_PROVIDERS = 'all';
