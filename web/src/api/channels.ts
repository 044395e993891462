import { keepPreviousData, queryOptions } from '@tanstack/react-query';
import { z } from 'zod/mini';

import { useSession } from '@/stores/session';

import { apiRequest } from './client';
import { ApiError, handleUnauthorized } from './errors';

/** Channel status (spec 02 §4). */
export const CHANNEL_ENABLED = 1;
export const CHANNEL_DISABLED = 2;
export const CHANNEL_AUTO_DISABLED = 3;

/** A channel as the server lists it: the key is write-only (`key` is always ""). */
export const channelSchema = z.object({
  id: z.int(),
  name: z.catch(z.string(), ''),
  type: z.catch(z.int(), 1),
  key_set: z.catch(z.boolean(), false),
  key_count: z.catch(z.int(), 0),
  openai_organization: z.catch(z.string(), ''),
  max_input_tokens: z.catch(z.number(), 0),
  base_url: z.catch(z.string(), ''),
  other: z.catch(z.string(), ''),
  model_mapping: z.catch(z.string(), ''),
  status_code_mapping: z.catch(z.string(), ''),
  models: z.catch(z.string(), ''),
  group: z.catch(z.string(), ''),
  auto_ban: z.catch(z.int(), 1),
  test_model: z.catch(z.string(), ''),
  proxy: z.catch(z.string(), ''),
  priority: z.catch(z.int(), 0),
  weight: z.catch(z.int(), 0),
  tag: z.catch(z.string(), ''),
  setting: z.catch(z.string(), ''),
  param_override: z.catch(z.string(), ''),
  used_quota: z.catch(z.number(), 0),
  balance: z.catch(z.number(), 0),
  response_time: z.catch(z.number(), 0),
  status: z.catch(z.int(), CHANNEL_ENABLED),
  other_info: z.catch(z.string(), ''),
  created_time: z.catch(z.number(), 0),
  test_time: z.catch(z.number(), 0),
  balance_updated_time: z.catch(z.number(), 0),
});
export type Channel = z.infer<typeof channelSchema>;

export const channelPageSchema = z.object({
  items: z.catch(z.array(channelSchema), []),
  page: z.catch(z.int(), 1),
  page_size: z.catch(z.int(), 10),
  total: z.catch(z.int(), 0),
});
export type ChannelPage = z.infer<typeof channelPageSchema>;

/** Comma text on the wire → list. */
export function splitList(text: string): string[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** other_info's status_reason and status_time (unix seconds), when present. */
export function statusInfo(channel: Pick<Channel, 'other_info'>): { reason: string; time: number } {
  try {
    const info = JSON.parse(channel.other_info || '{}') as Record<string, unknown>;
    return {
      reason: typeof info.status_reason === 'string' ? info.status_reason : '',
      time: typeof info.status_time === 'number' ? info.status_time : 0,
    };
  } catch {
    return { reason: '', time: 0 };
  }
}

export interface ChannelListQuery {
  keyword: string;
  model: string;
  group: string;
  page: number;
  pageSize: number;
  tagMode: boolean;
  /** Newest id first instead of priority order. */
  idSort?: boolean;
}

/** GET /api/channel/ (no filter) or GET /api/channel/search (keyword, model or group). */
export function fetchChannels(q: ChannelListQuery): Promise<ChannelPage> {
  const searching = [q.keyword, q.model, q.group].some((s) => s.trim() !== '');
  return apiRequest(searching ? '/api/channel/search' : '/api/channel/', {
    query: {
      keyword: searching ? q.keyword.trim() : undefined,
      model: searching ? q.model.trim() : undefined,
      group: searching ? q.group.trim() : undefined,
      p: q.page,
      page_size: q.pageSize,
      id_sort: q.idSort ? true : undefined,
      tag_mode: q.tagMode ? true : undefined,
    },
    schema: channelPageSchema,
  });
}

export const channelsQueryOptions = (query: ChannelListQuery) =>
  queryOptions({
    queryKey: ['channels', query],
    queryFn: () => fetchChannels(query),
    placeholderData: keepPreviousData,
  });

export function fetchChannel(id: number): Promise<Channel> {
  return apiRequest(`/api/channel/${id}`, { schema: channelSchema });
}

export const channelQueryOptions = (id: number) =>
  queryOptions({ queryKey: ['channels', 'detail', id], queryFn: () => fetchChannel(id) });

/** PUT /api/channel/ with an id and only the fields that change. */
export type ChannelUpdate = { id: number } & Record<string, unknown>;

export function updateChannel(payload: ChannelUpdate): Promise<string> {
  return apiRequestWithMessage('/api/channel/', 'PUT', payload);
}

/** POST /api/channel/: `{mode, channel}`; the answer's message carries notices. */
const createdSchema = z.object({ ids: z.catch(z.array(z.int()), []) });

/** POST /api/channel/: the server's notice and the new channels' ids (one per key in batch mode). */
export async function createChannel(
  mode: 'single' | 'batch',
  channel: Record<string, unknown>,
): Promise<{ message: string; ids: number[] }> {
  const answer = await bareRequest('/api/channel/', 'POST', { mode, channel });
  const created = createdSchema.safeParse(answer.data);
  return { message: answer.message, ids: created.success ? created.data.ids : [] };
}

export function deleteChannel(id: number): Promise<void> {
  return apiRequest(`/api/channel/${id}/`, { method: 'DELETE' });
}

export function copyChannel(id: number): Promise<{ id: number }> {
  return apiRequest(`/api/channel/copy/${id}`, {
    method: 'POST',
    schema: z.object({ id: z.int() }),
  });
}

export function deleteChannels(ids: number[]): Promise<number> {
  return apiRequest('/api/channel/batch', { method: 'POST', body: { ids }, schema: z.int() });
}

export function deleteDisabledChannels(): Promise<number> {
  return apiRequest('/api/channel/disabled', { method: 'DELETE', schema: z.int() });
}

export function setTagStatus(tag: string, enabled: boolean): Promise<void> {
  return apiRequest(`/api/channel/tag/${enabled ? 'enabled' : 'disabled'}`, {
    method: 'POST',
    body: { tag },
  });
}

export interface TagEdit {
  tag: string;
  new_tag?: string;
  model_mapping?: string;
  groups?: string[];
  models?: string[];
  priority?: number;
  weight?: number;
}

export function editTag(edit: TagEdit): Promise<void> {
  return apiRequest('/api/channel/tag', { method: 'PUT', body: edit });
}

export function tagChannels(ids: number[], tag: string): Promise<void> {
  return apiRequest('/api/channel/batch/tag', { method: 'POST', body: { ids, tag } });
}

/** POST /api/channel/fetch_models (new channel) or GET /api/channel/fetch_models/{id}. */
export function fetchUpstreamModels(
  source: { id: number } | { base_url: string; type: number; key: string },
): Promise<string[]> {
  if ('id' in source) {
    return apiRequest(`/api/channel/fetch_models/${source.id}`, { schema: z.array(z.string()) });
  }
  return apiRequest('/api/channel/fetch_models', {
    method: 'POST',
    body: source,
    schema: z.array(z.string()),
  });
}

const knownModelSchema = z.object({ id: z.string(), type: z.catch(z.int(), 0) });

/** GET /api/channel/models: the models the server knows, with their channel type. */
export const knownModelsQueryOptions = queryOptions({
  queryKey: ['channels', 'known-models'],
  queryFn: () => apiRequest('/api/channel/models', { schema: z.array(knownModelSchema) }),
  staleTime: 10 * 60_000,
  meta: { silent: true },
});

/** GET /api/channel/models_enabled: every model some enabled channel serves. */
export function fetchEnabledModels(): Promise<string[]> {
  return apiRequest('/api/channel/models_enabled', { schema: z.array(z.string()) });
}

function sessionHeaders(json: boolean): Record<string, string> {
  const headers: Record<string, string> = {
    'New-Api-User': String(useSession.getState().user?.id ?? -1),
    'Cache-Control': 'no-store',
  };
  if (json) headers['Content-Type'] = 'application/json';
  return headers;
}

const bareSchema = z.object({
  success: z.boolean(),
  message: z.catch(z.string(), ''),
  time: z.catch(z.number(), 0),
  data: z.optional(z.unknown()),
  code: z.catch(z.optional(z.string()), undefined),
});

/**
 * Like `apiRequest`, for the calls whose success message matters (create/update notices) or whose
 * answer has no `data` (the channel test's `time`).
 */
async function bareRequest(path: string, method: string, body?: unknown) {
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers: sessionHeaders(body !== undefined),
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
    });
  } catch (cause) {
    throw new ApiError('network', cause instanceof Error ? cause.message : String(cause));
  }
  const parsed = bareSchema.safeParse(await response.json().catch(() => undefined));
  if (!response.ok) {
    const error = new ApiError(
      'http',
      (parsed.success && parsed.data.message) || response.statusText,
      response.status,
      parsed.success ? parsed.data.code : undefined,
    );
    if (response.status === 401) handleUnauthorized(error);
    throw error;
  }
  if (!parsed.success) throw new ApiError('invalid', parsed.error.message);
  if (!parsed.data.success) {
    throw new ApiError('app', parsed.data.message, undefined, parsed.data.code);
  }
  return parsed.data;
}

async function apiRequestWithMessage(path: string, method: string, body: unknown) {
  return (await bareRequest(path, method, body)).message;
}

/** GET /api/channel/test/{id}?model=: the answer is `{success, message, time}` (seconds). */
export async function testChannel(id: number, model: string): Promise<number> {
  const query = model ? `?model=${encodeURIComponent(model)}` : '';
  return (await bareRequest(`/api/channel/test/${id}${query}`, 'GET')).time;
}

/** A key of a multi-key channel that the server disabled on its own (`other_info.disabled_keys`). */
export interface DisabledKey {
  /** 0-based line of the key in the key text. */
  index: number;
  reason: string;
  /** Unix seconds. */
  time: number;
}

const disabledKeySchema = z.object({
  index: z.int(),
  reason: z.catch(z.string(), ''),
  time: z.catch(z.number(), 0),
});

/** other_info's disabled_keys (per-key auto-ban), sorted by line; [] when absent or unreadable. */
export function disabledKeys(channel: Pick<Channel, 'other_info'>): DisabledKey[] {
  try {
    const info = JSON.parse(channel.other_info || '{}') as Record<string, unknown>;
    if (!Array.isArray(info.disabled_keys)) return [];
    return info.disabled_keys
      .flatMap((entry) => {
        const parsed = disabledKeySchema.safeParse(entry);
        return parsed.success ? [parsed.data] : [];
      })
      .sort((a, b) => a.index - b.index);
  } catch {
    return [];
  }
}

/** GET /api/channel/test: starts testing every channel in the background; how many. */
export async function testAllChannels(): Promise<number> {
  const data = await apiRequest('/api/channel/test', {
    schema: z.catch(z.object({ count: z.catch(z.int(), 0) }), { count: 0 }),
  });
  return data.count;
}

/** GET /api/channel/update_balance/{id}/: the channel's balance as the provider reports it. */
export function updateBalance(id: number): Promise<number> {
  return apiRequest(`/api/channel/update_balance/${id}/`, { schema: z.number() });
}

const balanceSummarySchema = z.object({
  updated: z.catch(z.int(), 0),
  failed: z.catch(z.int(), 0),
  disabled: z.catch(z.int(), 0),
  skipped: z.catch(z.int(), 0),
});
export type BalanceSummary = z.infer<typeof balanceSummarySchema>;

/**
 * GET /api/channel/update_balance: refreshes every enabled channel whose type has a balance API.
 * The counts when the server sends them, and its message.
 */
export async function updateAllBalances(): Promise<{
  summary: BalanceSummary | undefined;
  message: string;
}> {
  const answer = await bareRequest('/api/channel/update_balance', 'GET');
  const summary = balanceSummarySchema.safeParse(answer.data);
  return { summary: summary.success ? summary.data : undefined, message: answer.message };
}

const proxyReportSchema = z.object({
  status: z.catch(z.int(), 0),
  time: z.catch(z.number(), 0),
});
export type ProxyReport = z.infer<typeof proxyReportSchema>;

/**
 * POST /api/channel/test_proxy {proxy}: fetches a test page through the proxy (a POST body, so
 * the proxy's credentials stay out of URLs and access logs).
 */
export function testProxy(proxy: string): Promise<ProxyReport> {
  return apiRequest('/api/channel/test_proxy', {
    method: 'POST',
    body: { proxy },
    schema: proxyReportSchema,
  });
}

const rebuildReportSchema = z.object({
  channels: z.catch(z.int(), 0),
  abilities: z.catch(z.int(), 0),
  repaired: z.catch(z.int(), 0),
});
export type RebuildReport = z.infer<typeof rebuildReportSchema>;

/** POST /api/channel/fix: rebuilds the ability index; how many channels, rows and repairs. */
export function fixAbilities(): Promise<RebuildReport> {
  return apiRequest('/api/channel/fix', { method: 'POST', schema: rebuildReportSchema });
}

/**
 * POST /api/channel/{id}/key (root, with two-factor on and the session verified by POST
 * /api/verify within 5 minutes): the channel's key text.
 */
export async function revealChannelKey(id: number): Promise<string> {
  const data = await apiRequest(`/api/channel/${id}/key`, {
    method: 'POST',
    body: {},
    schema: z.object({ key: z.string() }),
  });
  return data.key;
}
