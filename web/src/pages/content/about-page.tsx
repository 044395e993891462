import { useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';

import { aboutQueryOptions } from '@/api/content';
import { ContentFrame, RichContent } from '@/components/common/rich-content';
import { PageHeader } from '@/components/layout/page-header';
import { Alert } from '@/components/ui/alert';
import { Spinner } from '@/components/ui/spinner';
import { isFrameUrl } from '@/lib/sanitize';

/** /about: the About content (sanitised Markdown/HTML, or an address in a frame), or a note. */
export function AboutPage() {
  const { t } = useTranslation('content');
  const about = useQuery(aboutQueryOptions);
  const text = about.data?.trim() ?? '';
  if (about.isPending) return <Spinner label={t('about.title')} />;
  if (about.isError) return <Alert tone="danger">{t('about.loadFailed')}</Alert>;
  if (isFrameUrl(text)) return <ContentFrame src={text} title={t('about.frameTitle')} />;
  return (
    <>
      <PageHeader title={t('about.title')} />
      {text === '' ? <Alert tone="info">{t('about.empty')}</Alert> : <RichContent source={text} />}
    </>
  );
}
