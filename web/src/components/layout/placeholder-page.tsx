import { Construction } from 'lucide-react';
import { useTranslation } from 'react-i18next';

import type zhCommon from '@/i18n/locales/zh/common.json';

import { PageHeader } from './page-header';

import './placeholder-page.css';

export type PageTitle = keyof typeof zhCommon.page.title;

/** A page whose area is not built yet: its title and a short note. */
export function PlaceholderPage({ title }: { title: PageTitle }) {
  const { t } = useTranslation();
  return (
    <>
      <PageHeader title={t(`page.title.${title}`)} />
      <div className="placeholder-page">
        <Construction className="placeholder-page__icon" aria-hidden />
        <p>{t('page.placeholder')}</p>
      </div>
    </>
  );
}
