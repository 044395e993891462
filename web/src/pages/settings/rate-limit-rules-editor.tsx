import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Plus, X } from 'lucide-react';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';

import { updateOption } from '@/api/options';
import type { Options } from '@/api/options';
import { groupsQueryOptions } from '@/api/users';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Card, CardContent, CardFooter, CardHeader, CardTitle } from '@/components/ui/card';
import { Field } from '@/components/ui/field';
import { Input } from '@/components/ui/input';
import { toast } from '@/stores/toasts';

import {
  emptyRule,
  MAX_QUEUE,
  MAX_QUEUE_WAIT_MS,
  MAX_RULES,
  parseRules,
  RULE_NUMBERS,
  ruleProblems,
  rulesText,
} from './rate-limit-rules';
import type { RuleNumber, RuleProblem, RuleRow } from './rate-limit-rules';

import '@/components/limits/limits.css';

type Item = { id: number; row: RuleRow };

/** Keys rows across edits (a rule has no id of its own). */
let lastId = 0;
const withId = (row: RuleRow): Item => ({ id: ++lastId, row });

/** The label of a rule's number field (`limits:rules.field.*`). */
const numberLabel = {
  concurrency_limit: 'rules.field.concurrency_limit',
  rpm_limit: 'rules.field.rpm_limit',
  tpm_limit: 'rules.field.tpm_limit',
  rpd_limit: 'rules.field.rpd_limit',
  queue: 'rules.field.queue',
  queue_timeout_ms: 'rules.field.queue_timeout_ms',
} as const satisfies Record<RuleNumber, string>;

/**
 * The group and model rules of the rate-limit tab (option `RateLimitRules`) as rows: a group,
 * a model or both, four limits and an optional queue per rule; every problem is said with its
 * rule's number before the save, and the server's own refusal is shown as it says it.
 */
export function RateLimitRulesEditor({
  options,
  readOnly = false,
}: {
  options: Options;
  readOnly?: boolean;
}) {
  const { t } = useTranslation('limits');
  const queryClient = useQueryClient();
  const stored = options.RateLimitRules ?? '[]';
  const initial = parseRules(stored);
  const [items, setItems] = useState<Item[]>(() => (initial ?? []).map(withId));
  const [checked, setChecked] = useState(false);
  const groups = useQuery({ ...groupsQueryOptions, enabled: !readOnly });
  const rows = items.map((item) => item.row);
  const problems = ruleProblems(rows);
  const shown = checked ? problems : [];

  const save = useMutation({
    mutationFn: (text: string) => updateOption('RateLimitRules', text),
    onSuccess: () => {
      toast.success(t('rules.saved'));
      setChecked(false);
      void queryClient.invalidateQueries({ queryKey: ['options'] });
    },
  });

  const set = (id: number, patch: Partial<RuleRow>) =>
    setItems((list) =>
      list.map((item) => (item.id === id ? { id, row: { ...item.row, ...patch } } : item)),
    );
  const submit = () => {
    setChecked(true);
    if (problems.length > 0) {
      toast.error(t('rules.checkInput'));
      return;
    }
    save.mutate(rulesText(rows));
  };
  const problemText = (p: RuleProblem) => {
    switch (p.kind) {
      case 'tooMany':
        return t('rules.problem.tooMany', { max: MAX_RULES });
      case 'duplicate':
        return t('rules.problem.duplicate', { n: p.rule, other: p.other });
      case 'queue':
        return t('rules.problem.queue', {
          n: p.rule,
          maxQueue: MAX_QUEUE,
          maxWait: MAX_QUEUE_WAIT_MS,
        });
      default:
        return t(`rules.problem.${p.kind}`, { n: p.rule });
    }
  };

  if (readOnly && !('RateLimitRules' in options)) return null;
  return (
    <Card className="settings__section" aria-labelledby="settings-rateLimitRules-title">
      <CardHeader>
        <CardTitle id="settings-rateLimitRules-title">{t('rules.title')}</CardTitle>
      </CardHeader>
      <fieldset className="settings__fieldset" disabled={readOnly}>
        <CardContent className="limits-rules">
          <p className="limits-section__note">{t('rules.description')}</p>
          <p className="limits-section__muted">{t('rules.queueHint')}</p>
          {initial === null ? (
            <Alert tone="warning">
              {t('rules.unreadable')}
              <code className="limits-rules__stored">{stored}</code>
            </Alert>
          ) : null}
          {items.length === 0 ? <p className="limits-section__muted">{t('rules.none')}</p> : null}
          <datalist id="rate-limit-rule-groups">
            {(groups.data ?? []).map((g) => (
              <option key={g} value={g} />
            ))}
          </datalist>
          <ol className="limits-rules__list">
            {items.map((item, index) => {
              const n = index + 1;
              const id = `rule-${item.id}`;
              const bad = shown.some((p) => p.rule === n);
              return (
                <li key={item.id} className="limits-rules__rule" data-invalid={bad || undefined}>
                  <fieldset
                    className="limits-rules__fields"
                    aria-label={t('rules.rule', { n })}
                    aria-invalid={bad || undefined}
                  >
                    <legend>{t('rules.rule', { n })}</legend>
                    <Field id={`${id}-group`} label={t('rules.field.group')}>
                      <Input
                        id={`${id}-group`}
                        list="rate-limit-rule-groups"
                        autoComplete="off"
                        placeholder={t('rules.anyGroup')}
                        value={item.row.group}
                        onChange={(e) => set(item.id, { group: e.target.value })}
                      />
                    </Field>
                    <Field id={`${id}-model`} label={t('rules.field.model')}>
                      <Input
                        id={`${id}-model`}
                        autoComplete="off"
                        placeholder={t('rules.anyModel')}
                        value={item.row.model}
                        onChange={(e) => set(item.id, { model: e.target.value })}
                      />
                    </Field>
                    {RULE_NUMBERS.map((name) => (
                      <Field key={name} id={`${id}-${name}`} label={t(numberLabel[name])}>
                        <Input
                          id={`${id}-${name}`}
                          type="number"
                          min={0}
                          step={1}
                          value={Number.isNaN(item.row[name]) ? '' : item.row[name]}
                          onChange={(e) =>
                            set(item.id, {
                              [name]: e.target.value === '' ? Number.NaN : Number(e.target.value),
                            })
                          }
                        />
                      </Field>
                    ))}
                    <div className="limits-rules__remove">
                      <Button
                        variant="ghost"
                        size="sm"
                        aria-label={t('rules.remove', { n })}
                        onClick={() => setItems((list) => list.filter((x) => x.id !== item.id))}
                      >
                        <X aria-hidden />
                      </Button>
                    </div>
                  </fieldset>
                </li>
              );
            })}
          </ol>
          {shown.length > 0 ? (
            <ul className="limits-rules__problems" role="alert">
              {shown.map((p) => (
                <li key={`${p.rule}-${p.kind}`}>{problemText(p)}</li>
              ))}
            </ul>
          ) : null}
          <div>
            <Button
              variant="secondary"
              size="sm"
              disabled={items.length >= MAX_RULES}
              onClick={() => setItems((list) => [...list, withId(emptyRule())])}
            >
              <Plus aria-hidden />
              {t('rules.add')}
            </Button>
          </div>
        </CardContent>
      </fieldset>
      {readOnly ? null : (
        <CardFooter>
          <Button disabled={save.isPending} onClick={submit}>
            {t('rules.save')}
          </Button>
        </CardFooter>
      )}
    </Card>
  );
}
