import { Columns3, Search } from 'lucide-react';
import type { FormEvent } from 'react';
import { useTranslation } from 'react-i18next';

import { Button } from '@/components/ui/button';
import { Input } from '@/components/ui/input';
import { Switch } from '@/components/ui/switch';
import { GroupInput } from '@/pages/users/group-input';

export interface ChannelSearch {
  keyword: string;
  model: string;
  group: string;
}

/** Search by keyword, model and group (applied on submit). */
export function ChannelSearchForm({
  draft,
  onEdit,
  onSubmit,
}: {
  draft: ChannelSearch;
  onEdit: (patch: Partial<ChannelSearch>) => void;
  onSubmit: (event: FormEvent) => void;
}) {
  const { t } = useTranslation('channels');
  return (
    <form className="data-toolbar" onSubmit={onSubmit} role="search">
      <Input
        aria-label={t('list.search.keyword')}
        placeholder={t('list.search.keyword')}
        value={draft.keyword}
        onChange={(e) => onEdit({ keyword: e.target.value })}
      />
      <Input
        aria-label={t('list.search.model')}
        placeholder={t('list.search.model')}
        value={draft.model}
        onChange={(e) => onEdit({ model: e.target.value })}
      />
      <GroupInput
        id="channels-search-group"
        aria-label={t('list.search.group')}
        value={draft.group}
        onChange={(group) => onEdit({ group })}
        allowAny
      />
      <Button type="submit" variant="secondary">
        <Search aria-hidden />
        {t('list.search.submit')}
      </Button>
    </form>
  );
}

/** The view switches, column settings and batch operations above the channel table. */
export function ChannelsToolbar({
  tagMode,
  onTagMode,
  idSort,
  onIdSort,
  onColumns,
  selectedCount,
  onDeleteSelected,
  onTagSelected,
  onDeleteDisabled,
}: {
  tagMode: boolean;
  onTagMode: (on: boolean) => void;
  idSort: boolean;
  onIdSort: (on: boolean) => void;
  onColumns: () => void;
  selectedCount: number;
  onDeleteSelected: () => void;
  onTagSelected: () => void;
  onDeleteDisabled: () => void;
}) {
  const { t } = useTranslation('channels');
  return (
    <div className="data-toolbar channels__toolbar">
      <label className="channels__switch">
        <Switch checked={tagMode} aria-label={t('list.tagMode')} onCheckedChange={onTagMode} />
        {t('list.tagMode')}
      </label>
      <label className="channels__switch">
        <Switch checked={idSort} aria-label={t('list.idSort')} onCheckedChange={onIdSort} />
        {t('list.idSort')}
      </label>
      <Button variant="secondary" size="sm" onClick={onColumns}>
        <Columns3 aria-hidden />
        {t('list.columns')}
      </Button>
      <span className="channels__selected">
        {t('list.batch.selected', { count: selectedCount })}
      </span>
      <Button variant="secondary" size="sm" onClick={onDeleteSelected}>
        {t('list.batch.delete')}
      </Button>
      <Button variant="secondary" size="sm" onClick={onTagSelected}>
        {t('list.batch.tag')}
      </Button>
      <Button variant="danger" size="sm" onClick={onDeleteDisabled}>
        {t('list.batch.deleteDisabled')}
      </Button>
    </div>
  );
}
