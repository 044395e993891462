import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';

import { localizedMessage } from '@/api/errors';
import { updateOption } from '@/api/options';
import type { Options } from '@/api/options';
import { Button } from '@/components/ui/button';
import { Card, CardContent, CardHeader, CardTitle } from '@/components/ui/card';
import { Field } from '@/components/ui/field';
import { Input } from '@/components/ui/input';
import { toast } from '@/stores/toasts';

/** The "other" tab's fields (spec 01 §2 personalisation), each saved on its own. */
export const contentFields = [
  'Notice',
  'SystemName',
  'Logo',
  'HomePageContent',
  'About',
  'Footer',
] as const;
type ContentField = (typeof contentFields)[number];

/** Fields edited on one line; the others are multi-line text. */
const singleLine: readonly ContentField[] = ['SystemName', 'Logo'];

/** One field with its own save button and its own notice (公告已更新, 页脚内容已更新, …). */
function ContentFieldRow({ field, stored }: { field: ContentField; stored: string }) {
  const { t } = useTranslation('settings');
  const queryClient = useQueryClient();
  const [value, setValue] = useState(stored);
  const id = `content-${field}`;
  const save = useMutation({
    mutationFn: () => updateOption(field, value),
    meta: { silent: true },
    onSuccess: () => {
      toast.success(t(`content.saved.${field}`));
      // The shell's name, logo and footer come from the status; the pages from their own calls.
      void queryClient.invalidateQueries({ queryKey: ['options'] });
      void queryClient.invalidateQueries({ queryKey: ['status'] });
      void queryClient.invalidateQueries({ queryKey: ['content'] });
    },
    onError: (error) => toast.error(`${t(`content.failed.${field}`)}: ${localizedMessage(error)}`),
  });
  return (
    <form
      className="settings__content-field"
      onSubmit={(e) => {
        e.preventDefault();
        save.mutate();
      }}
    >
      <Field id={id} label={t(`field.${field}`)} hint={t(`content.hint.${field}`)}>
        {singleLine.includes(field) ? (
          <Input id={id} value={value} onChange={(e) => setValue(e.target.value)} />
        ) : (
          <textarea
            id={id}
            className="ui-input settings__content-text"
            rows={field === 'Notice' || field === 'Footer' ? 4 : 8}
            value={value}
            onChange={(e) => setValue(e.target.value)}
          />
        )}
      </Field>
      <Button type="submit" variant="secondary" disabled={save.isPending}>
        {t(`content.save.${field}`)}
      </Button>
    </form>
  );
}

/** The "other" tab: notice, system name, logo, home content, about and footer. */
export function ContentSettings({ options }: { options: Options }) {
  const { t } = useTranslation('settings');
  return (
    <Card>
      <CardHeader>
        <CardTitle>{t('section.content')}</CardTitle>
      </CardHeader>
      <CardContent className="settings__content">
        {contentFields.map((field) => (
          <ContentFieldRow key={field} field={field} stored={options[field] ?? ''} />
        ))}
      </CardContent>
    </Card>
  );
}
