import { RotateCcw, Search } from 'lucide-react';
import { useState } from 'react';
import type { FormEvent } from 'react';
import { useTranslation } from 'react-i18next';

import { LOG_TYPE_ALL, logTypes } from '@/api/logs';
import type { LogFilter } from '@/api/logs';
import { Button } from '@/components/ui/button';
import { Input } from '@/components/ui/input';
import { Select } from '@/components/ui/select';
import { fromLocalInput, toLocalInput } from '@/lib/time';
import { GroupInput } from '@/pages/users/group-input';

import { defaultLogWindow } from './constants';

/** The filter a fresh page starts from: every type in the default window. */
export function initialLogFilter(now?: number): LogFilter {
  const { start, end } = defaultLogWindow(now);
  return {
    type: LOG_TYPE_ALL,
    tokenName: '',
    modelName: '',
    group: '',
    username: '',
    channel: '',
    start,
    end,
  };
}

type Draft = Omit<LogFilter, 'start' | 'end'> & { start: string; end: string };

const toDraft = (filter: LogFilter): Draft => ({
  ...filter,
  start: toLocalInput(filter.start),
  end: toLocalInput(filter.end),
});

/** The log search form: time range, token, model, group, type; admins also user and channel. */
export function LogFilters({
  filter,
  admin,
  onSearch,
}: {
  filter: LogFilter;
  admin: boolean;
  onSearch: (filter: LogFilter) => void;
}) {
  const { t } = useTranslation('log');
  const [draft, setDraft] = useState<Draft>(() => toDraft(filter));
  const set = (patch: Partial<Draft>) => setDraft({ ...draft, ...patch });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    onSearch({ ...draft, start: fromLocalInput(draft.start), end: fromLocalInput(draft.end) });
  };
  const reset = () => {
    const fresh = initialLogFilter();
    setDraft(toDraft(fresh));
    onSearch(fresh);
  };

  const text = (key: 'tokenName' | 'modelName' | 'group' | 'username' | 'channel') => (
    <Input
      aria-label={t(`filter.${key}`)}
      placeholder={t(`filter.${key}`)}
      value={draft[key]}
      inputMode={key === 'channel' ? 'numeric' : undefined}
      onChange={(e) => set({ [key]: e.target.value })}
    />
  );

  return (
    <form className="logs__filters" onSubmit={submit} role="search" aria-label={t('filter.label')}>
      <label className="logs__time">
        <span>{t('filter.start')}</span>
        <Input
          type="datetime-local"
          aria-label={t('filter.start')}
          value={draft.start}
          onChange={(e) => set({ start: e.target.value })}
        />
      </label>
      <label className="logs__time">
        <span>{t('filter.end')}</span>
        <Input
          type="datetime-local"
          aria-label={t('filter.end')}
          value={draft.end}
          onChange={(e) => set({ end: e.target.value })}
        />
      </label>
      {text('tokenName')}
      {text('modelName')}
      {admin ? (
        <GroupInput
          id="logs-filter-group"
          aria-label={t('filter.group')}
          value={draft.group}
          onChange={(group) => set({ group })}
          allowAny
        />
      ) : (
        text('group')
      )}
      {admin ? text('username') : null}
      {admin ? text('channel') : null}
      <Select
        aria-label={t('filter.type')}
        value={draft.type}
        onChange={(e) => set({ type: Number(e.target.value) })}
      >
        <option value={LOG_TYPE_ALL}>{t('type.0')}</option>
        {logTypes.map((type) => (
          <option key={type} value={type}>
            {t(`type.${type}`)}
          </option>
        ))}
      </Select>
      <div className="logs__filter-actions">
        <Button type="submit">
          <Search aria-hidden />
          {t('filter.submit')}
        </Button>
        <Button type="button" variant="secondary" onClick={reset}>
          <RotateCcw aria-hidden />
          {t('filter.reset')}
        </Button>
      </div>
    </form>
  );
}
