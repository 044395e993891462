import { useTranslation } from 'react-i18next';

import { ROLE_ROOT } from '@/api/user';
import type { User } from '@/api/user';
import { Money } from '@/components/common/money';
import { Badge } from '@/components/ui/badge';
import { Card, CardContent, CardHeader, CardTitle } from '@/components/ui/card';

/** Name, role (admin in red from role 100, else ordinary: spec 01 §6), group and usage. */
export function ProfileCard({ user }: { user: User }) {
  const { t } = useTranslation('personal');
  const stats = [
    ['balance', <Money key="b" quota={user.quota} />],
    ['used', <Money key="u" quota={user.used_quota} />],
    ['requests', String(user.request_count)],
    ['group', user.group],
  ] as const;
  return (
    <Card>
      <CardHeader>
        <CardTitle>{t('profile.title')}</CardTitle>
      </CardHeader>
      <CardContent>
        <div className="personal__identity">
          <strong>{user.display_name || user.username}</strong>
          <span>@{user.username}</span>
          {user.role >= ROLE_ROOT ? (
            <Badge tone="red">{t('profile.role.admin')}</Badge>
          ) : (
            <Badge>{t('profile.role.common')}</Badge>
          )}
        </div>
        <dl className="personal__stats">
          {stats.map(([key, value]) => (
            <div key={key} className="personal__stat">
              <dt>{t(`profile.stat.${key}`)}</dt>
              <dd>{value}</dd>
            </div>
          ))}
        </dl>
      </CardContent>
    </Card>
  );
}
