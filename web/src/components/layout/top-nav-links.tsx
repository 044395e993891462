import { ExternalLink } from 'lucide-react';
import { useTranslation } from 'react-i18next';
import { NavLink } from 'react-router';

import { useStatus } from '@/api/status';

const links = [
  { key: 'home', to: '/' },
  { key: 'console', to: '/detail' },
  { key: 'pricing', to: '/pricing' },
] as const;

export interface TopNavLinksProps {
  orientation: 'horizontal' | 'vertical';
  onNavigate?: () => void;
}

/** The top bar's links: home, console, pricing, docs (only with a docs link) and about. */
export function TopNavLinks({ orientation, onNavigate }: TopNavLinksProps) {
  const { t } = useTranslation();
  const { docs_link: docsLink } = useStatus();
  return (
    <nav className="top-nav" data-orientation={orientation} aria-label={t('nav.mainLabel')}>
      {links.map(({ key, to }) => (
        <NavLink key={key} to={to} end={to === '/'} className="top-nav__link" onClick={onNavigate}>
          {t(`nav.${key}`)}
        </NavLink>
      ))}
      {docsLink ? (
        <a className="top-nav__link" href={docsLink} target="_blank" rel="noreferrer">
          {t('nav.docs')}
          <ExternalLink className="top-nav__external" aria-hidden />
        </a>
      ) : null}
      <NavLink to="/about" className="top-nav__link" onClick={onNavigate}>
        {t('nav.about')}
      </NavLink>
    </nav>
  );
}
