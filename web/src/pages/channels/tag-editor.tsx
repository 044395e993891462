import type { ParseKeys } from 'i18next';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';

import { splitList } from '@/api/channels';
import type { Channel, TagEdit } from '@/api/channels';
import { Button } from '@/components/ui/button';
import {
  Dialog,
  DialogClose,
  DialogContent,
  DialogDescription,
  DialogFooter,
  DialogHeader,
  DialogTitle,
} from '@/components/ui/dialog';
import { Field } from '@/components/ui/field';
import { Input } from '@/components/ui/input';

import { tagEditSchema } from './schema';

interface Draft {
  new_tag: string;
  model_mapping: string;
  models: string;
  groups: string;
  priority: string;
  weight: string;
}

const empty: Draft = {
  new_tag: '',
  model_mapping: '',
  models: '',
  groups: '',
  priority: '',
  weight: '',
};

/** The tag editor drawer: PUT /api/channel/tag with only the fields filled in. */
export function TagEditorDrawer({
  editing,
  onClose,
  onSubmit,
}: {
  editing: { tag: string; children: Channel[] } | null;
  onClose: () => void;
  onSubmit: (edit: TagEdit) => void;
}) {
  const { t } = useTranslation('channels');
  const [draft, setDraft] = useState<Draft>(empty);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const close = () => {
    setDraft(empty);
    setErrors({});
    onClose();
  };
  const text = (field: keyof Draft) => ({
    value: draft[field],
    onChange: (e: { target: { value: string } }) => setDraft({ ...draft, [field]: e.target.value }),
  });
  const submit = () => {
    if (!editing) return;
    const values = {
      tag: editing.tag,
      new_tag: draft.new_tag,
      model_mapping: draft.model_mapping,
      models: splitList(draft.models),
      groups: splitList(draft.groups),
      priority: draft.priority.trim() === '' ? undefined : Number(draft.priority),
      weight: draft.weight.trim() === '' ? undefined : Number(draft.weight),
    };
    const parsed = tagEditSchema.safeParse(values);
    if (!parsed.success) {
      const next: Record<string, string> = {};
      for (const issue of parsed.error.issues) {
        next[issue.path.join('.')] ??= t(issue.message as ParseKeys<'channels'>);
      }
      setErrors(next);
      return;
    }
    const v = parsed.data;
    const edit: TagEdit = { tag: v.tag };
    if (v.new_tag) edit.new_tag = v.new_tag;
    if (v.model_mapping.trim()) edit.model_mapping = v.model_mapping;
    if (v.models.length) edit.models = v.models;
    if (v.groups.length) edit.groups = v.groups;
    if (v.priority !== undefined) edit.priority = v.priority;
    if (v.weight !== undefined) edit.weight = v.weight;
    setDraft(empty);
    setErrors({});
    onSubmit(edit);
  };
  return (
    <Dialog open={editing !== null} onOpenChange={(o) => (o ? undefined : close())}>
      <DialogContent side="right" className="channel-editor">
        <DialogHeader>
          <DialogTitle>{t('tag.editTitle', { tag: editing?.tag ?? '' })}</DialogTitle>
          <DialogDescription>{t('tag.editDescription')}</DialogDescription>
        </DialogHeader>
        {editing ? (
          <p className="channels__tag-members">
            {t('tag.members', {
              count: editing.children.length,
              names: editing.children.map((c) => c.name).join(t('tag.nameSeparator')),
            })}
          </p>
        ) : null}
        <form
          noValidate
          className="channels__tag-form"
          onSubmit={(e) => {
            e.preventDefault();
            submit();
          }}
        >
          {errors.tag ? <p role="alert">{errors.tag}</p> : null}
          <Field id="tag-new" label={t('tag.newTag')} error={errors.new_tag}>
            <Input id="tag-new" {...text('new_tag')} />
          </Field>
          <Field id="tag-models" label={t('field.models')} hint="a,b,c">
            <Input id="tag-models" {...text('models')} />
          </Field>
          <Field id="tag-groups" label={t('field.groups')} hint="default,vip">
            <Input id="tag-groups" {...text('groups')} />
          </Field>
          <Field id="tag-mapping" label={t('field.modelMapping')} error={errors.model_mapping}>
            <textarea
              id="tag-mapping"
              className="ui-input channels__json"
              rows={3}
              {...text('model_mapping')}
            />
          </Field>
          <Field id="tag-priority" label={t('field.priority')} error={errors.priority}>
            <Input id="tag-priority" type="number" {...text('priority')} />
          </Field>
          <Field id="tag-weight" label={t('field.weight')} error={errors.weight}>
            <Input id="tag-weight" type="number" {...text('weight')} />
          </Field>
          <DialogFooter>
            <DialogClose asChild>
              <Button type="button" variant="secondary">
                {t('tag.cancel')}
              </Button>
            </DialogClose>
            <Button type="submit">{t('tag.submit')}</Button>
          </DialogFooter>
        </form>
      </DialogContent>
    </Dialog>
  );
}
