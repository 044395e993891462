import { Home } from 'lucide-react';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';

import { Button } from '@/components/ui/button';

import './not-found.css';

/** Any path outside the route table (spec 01 §2). */
export function NotFoundPage() {
  const { t } = useTranslation();
  return (
    <div className="not-found">
      <p className="not-found__code">{t('notFound.code')}</p>
      <h1 className="not-found__title">{t('notFound.title')}</h1>
      <p className="not-found__hint">{t('notFound.hint')}</p>
      <Button asChild variant="secondary">
        <Link to="/">
          <Home aria-hidden />
          {t('notFound.backHome')}
        </Link>
      </Button>
    </div>
  );
}
