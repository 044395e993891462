import { RotateCcw, Search } from 'lucide-react';
import { useState } from 'react';
import type { FormEvent } from 'react';
import { useTranslation } from 'react-i18next';

import type { TaskFilter } from '@/api/tasks';
import { Button } from '@/components/ui/button';
import { Input } from '@/components/ui/input';
import { fromLocalInput, toLocalInput } from '@/lib/time';

type Draft = Omit<TaskFilter, 'start' | 'end'> & { start: string; end: string };

const toDraft = (filter: TaskFilter): Draft => ({
  ...filter,
  start: toLocalInput(filter.start),
  end: toLocalInput(filter.end),
});

/** The search form of both task pages: time range, task id, and for admins the channel. */
export function TaskFilters({
  filter,
  admin,
  idLabel,
  initial,
  onSearch,
}: {
  filter: TaskFilter;
  admin: boolean;
  idLabel: string;
  /** The filter "reset" goes back to (the page's default window). */
  initial: () => TaskFilter;
  onSearch: (filter: TaskFilter) => void;
}) {
  const { t } = useTranslation('task');
  const [draft, setDraft] = useState<Draft>(() => toDraft(filter));
  const set = (patch: Partial<Draft>) => setDraft({ ...draft, ...patch });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    onSearch({ ...draft, start: fromLocalInput(draft.start), end: fromLocalInput(draft.end) });
  };
  const reset = () => {
    const fresh = initial();
    setDraft(toDraft(fresh));
    onSearch(fresh);
  };

  return (
    <form className="tasks__filters" onSubmit={submit} role="search" aria-label={t('filter.label')}>
      <label className="tasks__time">
        <span>{t('filter.start')}</span>
        <Input
          type="datetime-local"
          aria-label={t('filter.start')}
          value={draft.start}
          onChange={(e) => set({ start: e.target.value })}
        />
      </label>
      <label className="tasks__time">
        <span>{t('filter.end')}</span>
        <Input
          type="datetime-local"
          aria-label={t('filter.end')}
          value={draft.end}
          onChange={(e) => set({ end: e.target.value })}
        />
      </label>
      <Input
        aria-label={idLabel}
        placeholder={idLabel}
        value={draft.id}
        onChange={(e) => set({ id: e.target.value })}
      />
      {admin ? (
        <Input
          aria-label={t('filter.channel')}
          placeholder={t('filter.channel')}
          inputMode="numeric"
          value={draft.channel}
          onChange={(e) => set({ channel: e.target.value })}
        />
      ) : null}
      <div className="tasks__filter-actions">
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
