import { ChevronLeft, ChevronRight } from 'lucide-react';
import { useTranslation } from 'react-i18next';

import { Button } from '@/components/ui/button';
import { Select } from '@/components/ui/select';

import './data-table.css';

export interface PagerProps {
  page: number;
  pageSize: number;
  total: number;
  onPage: (page: number) => void;
  onPageSize: (pageSize: number) => void;
  /** The sizes offered; the list pages share 10/20/50/100 (spec 02 §9). */
  sizes: readonly number[];
  /** Replaces "共 N 条" (an estimated total, or a list that counts something else). */
  totalLabel?: string;
}

/** Total, previous/next and the page-size picker under a server-paged list. */
export function Pager({
  page,
  pageSize,
  total,
  onPage,
  onPageSize,
  sizes,
  totalLabel,
}: PagerProps) {
  const { t } = useTranslation();
  const pages = Math.max(1, Math.ceil(total / pageSize));
  return (
    <nav className="data-pager" aria-label={t('pager.label')}>
      <span>{totalLabel ?? t('pager.total', { count: total })}</span>
      <Button
        variant="ghost"
        size="icon"
        aria-label={t('pager.previous')}
        disabled={page <= 1}
        onClick={() => onPage(page - 1)}
      >
        <ChevronLeft aria-hidden />
      </Button>
      <span>{t('pager.page', { page, pages })}</span>
      <Button
        variant="ghost"
        size="icon"
        aria-label={t('pager.next')}
        disabled={page >= pages}
        onClick={() => onPage(page + 1)}
      >
        <ChevronRight aria-hidden />
      </Button>
      <Select
        className="data-pager__size"
        aria-label={t('pager.pageSize')}
        value={pageSize}
        onChange={(e) => onPageSize(Number(e.target.value))}
      >
        {sizes.map((size) => (
          <option key={size} value={size}>
            {t('pager.perPage', { size })}
          </option>
        ))}
      </Select>
    </nav>
  );
}

/** The header checkbox and per-row checkboxes of a selectable list. */
export function useSelection<T extends { id: number }>(
  rows: T[],
  selected: number[],
  onSelect: (ids: number[]) => void,
) {
  const ids = rows.map((r) => r.id);
  return {
    all: ids.length > 0 && ids.every((id) => selected.includes(id)),
    toggleAll: (on: boolean) => onSelect(on ? ids : []),
    has: (id: number) => selected.includes(id),
    toggle: (id: number, on: boolean) =>
      onSelect(on ? [...selected, id] : selected.filter((x) => x !== id)),
  };
}
