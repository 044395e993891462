/** Channel types of spec 02 §3: id, label and the default base URL shown as a placeholder. */
export const channelTypes: readonly { id: number; label: string; baseUrl?: string }[] = [
  { id: 1, label: 'OpenAI', baseUrl: 'https://api.openai.com' },
  { id: 2, label: 'Midjourney Proxy' },
  { id: 3, label: 'Azure OpenAI' },
  { id: 4, label: 'Ollama', baseUrl: 'http://localhost:11434' },
  { id: 5, label: 'Midjourney Proxy Plus' },
  { id: 8, label: '自定义渠道' },
  { id: 11, label: 'PaLM2' },
  { id: 14, label: 'Claude', baseUrl: 'https://api.anthropic.com' },
  { id: 15, label: '百度文心千帆' },
  { id: 46, label: '百度文心千帆V2', baseUrl: 'https://qianfan.baidubce.com' },
  { id: 16, label: '智谱 ChatGLM' },
  { id: 17, label: '阿里通义千问', baseUrl: 'https://dashscope.aliyuncs.com' },
  { id: 18, label: '讯飞星火认知' },
  { id: 19, label: '360 智脑' },
  { id: 20, label: 'OpenRouter', baseUrl: 'https://openrouter.ai/api' },
  { id: 21, label: '知识库：AI Proxy' },
  { id: 22, label: '知识库：FastGPT' },
  { id: 23, label: '腾讯混元' },
  { id: 24, label: 'Google Gemini', baseUrl: 'https://generativelanguage.googleapis.com' },
  { id: 25, label: 'Moonshot', baseUrl: 'https://api.moonshot.cn' },
  { id: 26, label: '智谱 GLM-4V' },
  { id: 31, label: '零一万物', baseUrl: 'https://api.lingyiwanwu.com' },
  { id: 33, label: 'AWS Claude' },
  { id: 34, label: 'Cohere', baseUrl: 'https://api.cohere.ai' },
  { id: 35, label: 'MiniMax', baseUrl: 'https://api.minimax.chat' },
  { id: 36, label: 'Suno API' },
  { id: 37, label: 'Dify' },
  { id: 38, label: 'Jina', baseUrl: 'https://api.jina.ai' },
  { id: 39, label: 'Cloudflare', baseUrl: 'https://api.cloudflare.com' },
  { id: 40, label: 'SiliconCloud', baseUrl: 'https://api.siliconflow.cn' },
  { id: 41, label: 'Vertex AI' },
  { id: 42, label: 'Mistral AI', baseUrl: 'https://api.mistral.ai' },
  { id: 43, label: 'DeepSeek', baseUrl: 'https://api.deepseek.com' },
  { id: 44, label: '嵌入模型：MokaAI M3E' },
  { id: 45, label: '字节火山方舟、豆包通用', baseUrl: 'https://ark.cn-beijing.volces.com' },
  { id: 47, label: 'Xinference' },
  { id: 48, label: 'xAI', baseUrl: 'https://api.x.ai' },
  { id: 49, label: 'Coze', baseUrl: 'https://api.coze.cn' },
];

export function channelType(id: number) {
  return channelTypes.find((t) => t.id === id);
}

/** Types whose label is translated (`channels:type.<id>`); the others are brand names. */
export const translatedTypes = [8, 15, 46, 16, 17, 18, 19, 21, 22, 23, 26, 31, 44, 45] as const;

/** The label of a type id in the current language (the id itself when unknown). */
export function typeLabel(
  t: (key: `type.${(typeof translatedTypes)[number]}`) => string,
  id: number,
) {
  const known = translatedTypes.find((x) => x === id);
  if (known !== undefined) return t(`type.${known}`);
  return channelType(id)?.label ?? String(id);
}

/** Types whose key has its own format (spec 02 §5; 41 takes a service-account JSON key). */
export const keyHintTypes = [15, 18, 22, 23, 33, 41] as const;

/** Types whose base URL means something special (3 Azure endpoint, 8 custom full URL). */
export const baseUrlHintTypes = [3, 8] as const;

/** Types whose `other` field means something (spec 02 §9 special types): the editor hints it. */
export const otherHintTypes = [3, 18, 21, 39, 41, 49] as const;

/** The Spark type: an empty `other` (API version) becomes v2.1. */
export const SPARK_TYPE = 18;
export const SPARK_DEFAULT_VERSION = 'v2.1';

/** Response-time badge tone (spec 02 §4): ms → tone; 0 = untested. */
export type ResponseTone = 'untested' | 'green' | 'lime' | 'yellow' | 'red';
export function responseTone(ms: number): ResponseTone {
  if (ms <= 0) return 'untested';
  if (ms <= 1000) return 'green';
  if (ms <= 3000) return 'lime';
  if (ms <= 5000) return 'yellow';
  return 'red';
}

/** The table's columns; `select` and `actions` always show. */
export const channelColumns = [
  'id',
  'name',
  'group',
  'type',
  'status',
  'responseTime',
  'balance',
  'priority',
  'weight',
] as const;
export type ChannelColumn = (typeof channelColumns)[number];

/** Local storage key of the id-sort switch ("1" = newest id first). */
export const ID_SORT_STORAGE_KEY = 'channels-id-sort';
