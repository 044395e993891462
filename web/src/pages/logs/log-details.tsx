import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';

import { attemptErrors } from '@/api/logs';
import type { Attempt, LogEntry, LogOther } from '@/api/logs';
import { Badge } from '@/components/ui/badge';
import { formatAmount } from '@/lib/format';

import { frtTone } from './constants';
import { refusalText } from './refusal';
import { toneBadge } from './tone';

function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

const ratio = (value: number | undefined) =>
  value === undefined ? undefined : String(Number(value.toFixed(6)));

/** The expanded part of a log row: what `other` says about pricing, timing and routing. */
export function LogDetails({
  log,
  other,
  admin,
}: {
  log: LogEntry;
  other: LogOther;
  admin: boolean;
}) {
  const { t } = useTranslation('log');
  const perCall = other.model_price !== undefined && other.model_price >= 0;
  const facts: [string, ReactNode][] = [];
  const add = (label: string, value: ReactNode | undefined) => {
    if (value !== undefined && value !== '') facts.push([label, value]);
  };

  if (admin && log.channel > 0) {
    add(
      t('detail.channel'),
      log.channel_name ? `#${log.channel} ${log.channel_name}` : `#${log.channel}`,
    );
  }
  if (other.is_model_mapped && other.upstream_model_name) {
    add(t('detail.billedModel'), log.model_name);
    add(t('detail.upstreamModel'), other.upstream_model_name);
  }
  if (perCall) {
    add(t('detail.modelPrice'), ratio(other.model_price));
  } else {
    add(t('detail.modelRatio'), ratio(other.model_ratio));
    add(t('detail.completionRatio'), ratio(other.completion_ratio));
  }
  add(t('detail.groupRatio'), ratio(other.group_ratio));
  add(t('detail.userGroupRatio'), ratio(other.user_group_ratio));
  if (other.cache_tokens) {
    add(t('detail.cacheTokens'), other.cache_tokens);
    add(t('detail.cacheRatio'), ratio(other.cache_ratio));
  }
  if (other.cache_creation_tokens) {
    add(t('detail.cacheCreationTokens'), other.cache_creation_tokens);
    add(t('detail.cacheCreationRatio'), ratio(other.cache_creation_ratio));
  }
  if (other.frt !== undefined && other.frt > 0) {
    const seconds = other.frt / 1000;
    add(
      t('detail.frt'),
      toneBadge(frtTone(seconds), t('cell.seconds', { seconds: formatAmount(seconds) }), 'frt'),
    );
  }
  add(t('detail.reasoningEffort'), other.reasoning_effort);
  if (other.limit) add(t('detail.refusedBy'), refusalText(t, other.limit));
  add(t('detail.content'), log.content);

  const attempts = admin ? (other.admin_info?.attempts ?? []) : [];
  return (
    <div className="logs__details">
      <dl className="logs__facts">
        {facts.map(([label, value]) => (
          <Fact key={label} label={label}>
            {value}
          </Fact>
        ))}
      </dl>
      {attempts.length > 0 ? <AttemptTimeline attempts={attempts} /> : null}
    </div>
  );
}

/** Every channel a request tried, in order, with its status, latency and error class. */
function AttemptTimeline({ attempts }: { attempts: Attempt[] }) {
  const { t } = useTranslation('log');
  const errorText = (e: string) => {
    const known = attemptErrors.find((x) => x === e);
    return known === undefined ? e : t(`detail.attempt.class.${known}`);
  };
  return (
    <section className="logs__attempts" aria-label={t('detail.attempts')}>
      <h3>{t('detail.attempts')}</h3>
      <ol>
        {attempts.map((attempt, i) => {
          const ok = attempt.e === '' && attempt.s >= 200 && attempt.s < 400;
          return (
            <li key={i} data-outcome={ok ? 'ok' : 'failed'}>
              <span>
                {t('detail.attempt.channel')} #{attempt.c}
              </span>
              <Badge tone={ok ? 'green' : 'red'}>
                {attempt.s > 0
                  ? `${t('detail.attempt.status')} ${attempt.s}`
                  : t('detail.attempt.noAnswer')}
              </Badge>
              {attempt.ms !== undefined ? (
                <span>{t('detail.attempt.ms', { ms: attempt.ms })}</span>
              ) : null}
              {attempt.e ? (
                <span className="logs__attempt-error">{errorText(attempt.e)}</span>
              ) : null}
            </li>
          );
        })}
      </ol>
    </section>
  );
}
