import { useTranslation } from 'react-i18next';
import {
  Area,
  AreaChart,
  Bar,
  BarChart,
  CartesianGrid,
  Cell,
  Legend,
  Pie,
  PieChart,
  Tooltip,
  XAxis,
  YAxis,
} from 'recharts';

import type { Granularity } from '@/api/dashboard';
import { Card, CardContent, CardHeader, CardTitle } from '@/components/ui/card';
import { formatCompact } from '@/lib/format';
import { useFormatQuota } from '@/lib/use-format-quota';

import { bucketLabel, OTHER_SERIES } from './aggregate';
import type { Dashboard } from './aggregate';

/** Series colours, readable on the light and the dark theme. */
const palette = ['#4f5bd5', '#1f9d5c', '#e08a00', '#d23f3f', '#7c3aed', '#0e9aa7', '#8a91a0'];

const axis = { fontSize: 12, fill: 'var(--text-muted)' };
const tooltipStyle = {
  contentStyle: {
    background: 'var(--surface)',
    border: '1px solid var(--border)',
    borderRadius: 8,
    color: 'var(--text)',
  },
};

/** The dashboard's charts (recharts, loaded with this chunk only when the page shows them). */
export function DashboardCharts({
  dashboard,
  granularity,
}: {
  dashboard: Dashboard;
  granularity: Granularity;
}) {
  const { t } = useTranslation('detail');
  const formatQuota = useFormatQuota();
  const seriesName = (key: string) => (key === OTHER_SERIES ? t('chart.other') : key || '—');
  const data = dashboard.buckets.map((b) => ({
    label: bucketLabel(b.time, granularity),
    count: b.count,
    ...b.byModel,
  }));
  const shares = dashboard.models.slice(0, palette.length - 1).map((m) => ({
    name: m.model,
    value: m.quota,
  }));
  const rest = dashboard.models.slice(palette.length - 1).reduce((sum, m) => sum + m.quota, 0);
  if (rest > 0) shares.push({ name: OTHER_SERIES, value: rest });

  return (
    <div className="detail__charts">
      <Card className="detail__chart detail__chart--wide" aria-label={t('chart.quota')}>
        <CardHeader>
          <CardTitle>{t('chart.quota')}</CardTitle>
        </CardHeader>
        <CardContent>
          <BarChart responsive style={{ width: '100%', height: 300 }} data={data}>
            <CartesianGrid strokeDasharray="3 3" stroke="var(--border)" vertical={false} />
            <XAxis dataKey="label" tick={axis} minTickGap={16} />
            <YAxis tick={axis} tickFormatter={(v: number) => formatQuota(v)} width={72} />
            <Tooltip
              {...tooltipStyle}
              formatter={(value, name) => [formatQuota(Number(value)), seriesName(String(name))]}
            />
            <Legend formatter={(name) => seriesName(String(name))} />
            {dashboard.series.map((key, i) => (
              <Bar
                key={key}
                dataKey={key}
                stackId="quota"
                fill={palette[i % palette.length]}
                isAnimationActive={false}
              />
            ))}
          </BarChart>
        </CardContent>
      </Card>
      <Card className="detail__chart" aria-label={t('chart.count')}>
        <CardHeader>
          <CardTitle>{t('chart.count')}</CardTitle>
        </CardHeader>
        <CardContent>
          <AreaChart responsive style={{ width: '100%', height: 260 }} data={data}>
            <CartesianGrid strokeDasharray="3 3" stroke="var(--border)" vertical={false} />
            <XAxis dataKey="label" tick={axis} minTickGap={16} />
            <YAxis tick={axis} tickFormatter={(v: number) => formatCompact(v)} width={48} />
            <Tooltip {...tooltipStyle} formatter={(value) => [value, t('total.count')]} />
            <Area
              type="monotone"
              dataKey="count"
              stroke={palette[0]}
              fill={palette[0]}
              fillOpacity={0.18}
              isAnimationActive={false}
            />
          </AreaChart>
        </CardContent>
      </Card>
      <Card className="detail__chart" aria-label={t('chart.models')}>
        <CardHeader>
          <CardTitle>{t('chart.models')}</CardTitle>
        </CardHeader>
        <CardContent>
          <PieChart responsive style={{ width: '100%', height: 260 }}>
            <Pie
              data={shares}
              dataKey="value"
              nameKey="name"
              innerRadius="55%"
              outerRadius="85%"
              isAnimationActive={false}
            >
              {shares.map((share, i) => (
                <Cell key={share.name} fill={palette[i % palette.length]} />
              ))}
            </Pie>
            <Tooltip
              {...tooltipStyle}
              formatter={(value, name) => [formatQuota(Number(value)), seriesName(String(name))]}
            />
            <Legend formatter={(name) => seriesName(String(name))} />
          </PieChart>
        </CardContent>
      </Card>
    </div>
  );
}
