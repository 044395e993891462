import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';

import { homeBlockSchemas } from '@/api/content';
import type { HomeBlock } from '@/api/content';
import { localizedMessage } from '@/api/errors';
import { updateOption } from '@/api/options';
import type { Options } from '@/api/options';
import { Button } from '@/components/ui/button';
import { Card, CardContent, CardHeader, CardTitle } from '@/components/ui/card';
import { Field } from '@/components/ui/field';
import { toast } from '@/stores/toasts';

/** The home page's JSON blocks (spec 02 §3), each edited as JSON text and saved on its own. */
export const homeBlocks: readonly HomeBlock[] = [
  'Providers',
  'CustemNavLinks',
  'TypingList',
  'Advantages',
  'ModelDescriptions',
];

/** What is wrong with a block's text: not JSON, or JSON of another shape (with where). */
export type BlockProblem = { kind: 'json' } | { kind: 'shape'; path: string } | null;

/** Checks a block's text: valid JSON of the block's shape (the home page reads that shape). */
export function checkBlock(block: HomeBlock, text: string): BlockProblem {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: 'json' };
  }
  const parsed = homeBlockSchemas[block].safeParse(value);
  if (parsed.success) return null;
  const path = parsed.error.issues[0]?.path.join('.') ?? '';
  return { kind: 'shape', path };
}

/** JSON text re-printed (`indent` spaces, or compact), or null when it is not JSON. */
function reprint(text: string, indent?: number): string | null {
  try {
    return JSON.stringify(JSON.parse(text), null, indent);
  } catch {
    return null;
  }
}

function HomeBlockRow({ block, stored }: { block: HomeBlock; stored: string }) {
  const { t } = useTranslation('settings');
  const queryClient = useQueryClient();
  const [value, setValue] = useState(() => reprint(stored, 2) ?? stored);
  const [problem, setProblem] = useState<BlockProblem>(null);
  const id = `home-block-${block}`;
  const save = useMutation({
    mutationFn: (text: string) => updateOption(block, text),
    meta: { silent: true },
    onSuccess: () => {
      toast.success(t(`homeBlocks.saved.${block}`));
      void queryClient.invalidateQueries({ queryKey: ['options'] });
      void queryClient.invalidateQueries({ queryKey: ['content'] });
    },
    onError: (error) => toast.error(`${t('toast.saveFailed')}: ${localizedMessage(error)}`),
  });
  const error =
    problem === null
      ? undefined
      : problem.kind === 'json'
        ? t('validation.invalidJson')
        : t('homeBlocks.shape', { path: problem.path || '—' });
  return (
    <form
      className="settings__content-field"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        const found = checkBlock(block, value);
        setProblem(found);
        if (found) {
          toast.error(t('toast.checkInput'));
          return;
        }
        const text = reprint(value) ?? value;
        if (text === reprint(stored)) {
          toast.info(t('toast.noChanges'));
          return;
        }
        save.mutate(text);
      }}
    >
      <Field
        id={id}
        label={t(`homeBlocks.label.${block}`)}
        hint={t(`homeBlocks.hint.${block}`)}
        error={error}
      >
        <textarea
          id={id}
          className="ui-input settings__code"
          rows={6}
          spellCheck={false}
          aria-invalid={problem !== null}
          value={value}
          onChange={(e) => setValue(e.target.value)}
        />
      </Field>
      <Button type="submit" variant="secondary" disabled={save.isPending}>
        {t('homeBlocks.save', { name: t(`homeBlocks.label.${block}`) })}
      </Button>
    </form>
  );
}

/** The "other" tab's home-page blocks card: providers, nav links, typing list, advantages, descriptions. */
export function HomeBlocksSettings({ options }: { options: Options }) {
  const { t } = useTranslation('settings');
  return (
    <Card aria-labelledby="settings-home-blocks-title">
      <CardHeader>
        <CardTitle id="settings-home-blocks-title">{t('homeBlocks.title')}</CardTitle>
      </CardHeader>
      <CardContent className="settings__content">
        {homeBlocks.map((block) => (
          <HomeBlockRow key={block} block={block} stored={options[block] ?? ''} />
        ))}
      </CardContent>
    </Card>
  );
}
