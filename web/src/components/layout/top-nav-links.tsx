import { useQuery } from '@tanstack/react-query';
import { ExternalLink } from 'lucide-react';
import { useTranslation } from 'react-i18next';
import { NavLink } from 'react-router';

import { navLinksQueryOptions } from '@/api/content';
import { useStatus } from '@/api/status';
import { safeUrl } from '@/lib/safe-url';
import { useSession } from '@/stores/session';

const links = [
  { key: 'home', to: '/' },
  { key: 'console', to: '/detail' },
  { key: 'pricing', to: '/pricing' },
] as const;

export interface TopNavLinksProps {
  orientation: 'horizontal' | 'vertical';
  onNavigate?: () => void;
}

/**
 * The top bar's links: home, console (signed-in users), pricing, docs (only with a docs link),
 * the admin's custom links (CustemNavLinks; script and file URLs left out) and about.
 */
export function TopNavLinks({ orientation, onNavigate }: TopNavLinksProps) {
  const { t } = useTranslation();
  const { docs_link: docsLink } = useStatus();
  // The console link leads a guest to /login: it is for signed-in users only.
  const signedIn = useSession((s) => s.user !== null);
  const custom = useQuery(navLinksQueryOptions).data ?? [];
  return (
    <nav className="top-nav" data-orientation={orientation} aria-label={t('nav.mainLabel')}>
      {links
        .filter(({ key }) => signedIn || key !== 'console')
        .map(({ key, to }) => (
          <NavLink
            key={key}
            to={to}
            end={to === '/'}
            className="top-nav__link"
            onClick={onNavigate}
          >
            {t(`nav.${key}`)}
          </NavLink>
        ))}
      {docsLink ? (
        <NavLink to="/docs" className="top-nav__link" onClick={onNavigate}>
          {t('nav.docs')}
        </NavLink>
      ) : null}
      {custom.map((link) => {
        const href = safeUrl(link.url);
        return href ? (
          <a
            key={link.item_key || link.url}
            className="top-nav__link"
            href={href}
            target="_blank"
            rel="noopener noreferrer"
          >
            {link.text}
            <ExternalLink className="top-nav__external" aria-hidden />
          </a>
        ) : null;
      })}
      <NavLink to="/about" className="top-nav__link" onClick={onNavigate}>
        {t('nav.about')}
      </NavLink>
    </nav>
  );
}
