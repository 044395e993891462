import { useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';

import { groupsQueryOptions } from '@/api/users';
import { Input } from '@/components/ui/input';
import { Select } from '@/components/ui/select';

export interface GroupInputProps {
  id: string;
  value: string;
  onChange: (group: string) => void;
  /** Offer "any group" (an empty value) first: for the search form. */
  allowAny?: boolean;
  'aria-label'?: string;
  'aria-invalid'?: boolean;
}

/**
 * A group picker from GET /api/group/. Until that route exists (it answers 404) or while it
 * loads, a text input takes the group name instead.
 */
export function GroupInput({ id, value, onChange, allowAny, ...aria }: GroupInputProps) {
  const { t } = useTranslation('users');
  const groups = useQuery(groupsQueryOptions);
  if (!groups.data || groups.data.length === 0) {
    return (
      <Input
        id={id}
        placeholder={t('list.search.group')}
        value={value}
        onChange={(e) => onChange(e.target.value)}
        {...aria}
      />
    );
  }
  const options =
    groups.data.includes(value) || value === '' ? groups.data : [value, ...groups.data];
  return (
    <Select id={id} value={value} onChange={(e) => onChange(e.target.value)} {...aria}>
      {allowAny ? <option value="">{t('list.search.anyGroup')}</option> : null}
      {options.map((group) => (
        <option key={group} value={group}>
          {group}
        </option>
      ))}
    </Select>
  );
}
