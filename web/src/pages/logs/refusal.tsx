import type { TFunction } from 'i18next';
import { useTranslation } from 'react-i18next';

import { RATE_LIMIT_CODE } from '@/api/logs';
import type { LimitRefusal, LogOther } from '@/api/logs';
import { Badge } from '@/components/ui/badge';

/** Whether an error row is a request a rate limit refused. */
export const isLimitRefusal = (other: LogOther) =>
  other.limit !== undefined || other.error_code === RATE_LIMIT_CODE;

/** Whose limit refused the request, e.g. "API key #12" or "rule (group free, model gpt-4o)". */
function scopeText(t: TFunction<'log'>, limit: LimitRefusal): string {
  const id = (n: number | undefined) => (n === undefined ? '?' : String(n));
  switch (limit.scope) {
    case 'user':
      return t('refusal.scope.user', { id: id(limit.user_id) });
    case 'token':
      return t('refusal.scope.token', { id: id(limit.token_id) });
    case 'channel':
      return t('refusal.scope.channel', { id: id(limit.channel_id) });
    case 'channel_key':
      return t('refusal.scope.channelKey', {
        id: id(limit.channel_id),
        line: limit.key_index === undefined ? '?' : limit.key_index + 1,
      });
    case 'rule':
      return t('refusal.scope.rule', {
        group: limit.group || t('refusal.anyGroup'),
        model: limit.model || t('refusal.anyModel'),
      });
  }
}

/** The sentence naming the limit that refused the request. */
export function refusalText(t: TFunction<'log'>, limit: LimitRefusal): string {
  const kind = limit.kind
    ? t(`refusal.kind.${limit.kind}`, { minutes: limit.window_minutes ?? '?' })
    : t('refusal.kind.unknown');
  return limit.limit === undefined
    ? t('refusal.textNoValue', { scope: scopeText(t, limit), kind })
    : t('refusal.text', { scope: scopeText(t, limit), kind, limit: limit.limit });
}

/** The row's mark of a rate-limit refusal: a badge, titled with the rule when it is known. */
export function RefusalBadge({ other }: { other: LogOther }) {
  const { t } = useTranslation('log');
  if (!isLimitRefusal(other)) return null;
  const title = other.limit ? refusalText(t, other.limit) : undefined;
  return (
    <Badge tone="orange" title={title} className="logs__refusal">
      {other.limit?.kind
        ? t('refusal.badgeKind', { kind: t(`refusal.short.${other.limit.kind}`) })
        : t('refusal.badge')}
    </Badge>
  );
}
