import { useMemo } from 'react';
import { useTranslation } from 'react-i18next';

import { useStatus } from '@/api/status';
import { sanitizeHtml } from '@/lib/sanitize';

/** The admin's custom footer HTML, or a default credit line with the license note. */
export function Footer() {
  const { t } = useTranslation();
  const { footer_html: footerHtml, version } = useStatus();
  // The footer is HTML the administrator wrote in the settings (spec 01 §2): made inert first.
  const safe = useMemo(() => sanitizeHtml(footerHtml), [footerHtml]);
  if (safe.trim()) {
    return <footer className="footer" dangerouslySetInnerHTML={{ __html: safe }} />;
  }
  return (
    <footer className="footer">
      <span>{t('footer.credit')}</span>
      {version ? <span className="footer__version">{version}</span> : null}
      <span aria-hidden>·</span>
      <span>{t('footer.license')}</span>
    </footer>
  );
}
