import type { ParseKeys, TFunction } from 'i18next';

/**
 * The label of a channel type id in the current language: `channels:type.<id>` (every type of
 * spec 02 §3 has one), else the server's name for it, else the id. What a type needs and can do
 * comes from the server's type table (`@/api/channel-types`), not from here.
 */
export function typeLabel(t: TFunction<'channels'>, id: number, name?: string): string {
  return t(`type.${id}` as ParseKeys<'channels'>, { defaultValue: name ?? String(id) });
}

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
