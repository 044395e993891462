import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';

import { useStatus } from '@/api/status';

/** The system's logo and name from the status, linking home. */
export function Brand({ onNavigate }: { onNavigate?: () => void }) {
  const { t } = useTranslation();
  const { logo, system_name: systemName } = useStatus();
  return (
    <Link to="/" className="brand" onClick={onNavigate}>
      <img className="brand__logo" src={logo || '/favicon.svg'} alt="" />
      <span className="brand__name">{systemName || t('app.name')}</span>
    </Link>
  );
}
