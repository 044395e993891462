import { ExternalLink } from 'lucide-react';
import { useTranslation } from 'react-i18next';

import { useStatus } from '@/api/status';
import { ContentFrame } from '@/components/common/rich-content';
import { PageHeader } from '@/components/layout/page-header';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { safeUrl } from '@/lib/safe-url';

/** /docs: the status's docs link in a frame, with a way out to a new tab (some sites refuse frames). */
export function DocsPage() {
  const { t } = useTranslation('content');
  const link = safeUrl(useStatus().docs_link);
  return (
    <>
      <PageHeader
        title={t('docs.title')}
        actions={
          link ? (
            <Button variant="secondary" asChild>
              <a href={link} target="_blank" rel="noopener noreferrer">
                <ExternalLink aria-hidden />
                {t('docs.open')}
              </a>
            </Button>
          ) : null
        }
      />
      {link ? (
        <ContentFrame src={link} title={t('docs.frameTitle')} />
      ) : (
        <Alert tone="info">{t('docs.empty')}</Alert>
      )}
    </>
  );
}
