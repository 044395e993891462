import { useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';

import { cacheHitRateQueryOptions } from '@/api/dashboard';
import { Table } from '@/components/ui/table';
import { formatCompact } from '@/lib/format';

/** The rate as a percentage with one decimal. */
const percent = (rate: number) => `${(Math.min(Math.max(rate, 0), 1) * 100).toFixed(1)}%`;

/**
 * Admins: the prompt-cache hit rate per channel in the window (GET /api/dashboard/cache_hit_rate):
 * cached prompt tokens over prompt tokens, a bar per channel; an empty state when no channel
 * answered a prompt in the window.
 */
export function CacheRateCard({ start, end }: { start: number; end: number }) {
  const { t } = useTranslation('detail');
  const data = useQuery(cacheHitRateQueryOptions(start, end));
  if (!data.data) return null;
  const channels = data.data;
  return (
    <section className="detail__models" aria-label={t('cache.title')}>
      <h2>{t('cache.title')}</h2>
      <p className="detail__hint">{t('cache.note')}</p>
      {channels.length === 0 ? (
        <p className="detail__empty">{t('cache.empty')}</p>
      ) : (
        <Table>
          <thead>
            <tr>
              <th>{t('cache.channel')}</th>
              <th>{t('cache.prompt')}</th>
              <th>{t('cache.cached')}</th>
              <th>{t('cache.rate')}</th>
            </tr>
          </thead>
          <tbody>
            {channels.map((c) => {
              const name = c.channel_name || t('cache.deleted', { id: c.channel_id });
              return (
                <tr key={c.channel_id} aria-label={name}>
                  <td>{name}</td>
                  <td>{formatCompact(c.prompt_tokens)}</td>
                  <td>{formatCompact(c.cached_tokens)}</td>
                  <td>
                    <span className="detail__rate">
                      <span className="detail__rate-bar" aria-hidden>
                        <span style={{ width: percent(c.hit_rate) }} />
                      </span>
                      {percent(c.hit_rate)}
                    </span>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </Table>
      )}
    </section>
  );
}
