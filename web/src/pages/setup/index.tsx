import { zodResolver } from '@hookform/resolvers/zod';
import { useMutation, useQuery } from '@tanstack/react-query';
import type { ParseKeys } from 'i18next';
import { Database, Globe, Rocket, ShieldCheck, SlidersHorizontal } from 'lucide-react';
import { useState } from 'react';
import { Controller, useForm } from 'react-hook-form';
import { Trans, useTranslation } from 'react-i18next';

import { ApiError, localizedMessage } from '@/api/errors';
import { setupInfoQueryOptions, submitSetup } from '@/api/setup';
import type { SetupInfo } from '@/api/setup';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/components/ui/card';
import { Field } from '@/components/ui/field';
import { Input } from '@/components/ui/input';
import { RadioCard, RadioGroup } from '@/components/ui/radio-group';
import { Spinner } from '@/components/ui/spinner';

import { setupSchema, toSetupPayload, usageModes } from './schema';
import type { SetupValues } from './schema';
import { UsageModeHelp } from './usage-mode-help';

import './setup.css';

/** The database file's name (the server does not tell a stranger where its data directory is). */
const DATA_FILE_NAME = 'tollgate.redb';

/** Delay before the page reloads after a successful setup (spec 01 §9). */
const RELOAD_DELAY_MS = 1500;

/** /setup: first-run initialization (spec 01 §2, §4, §5). */
export function SetupPage() {
  const { t } = useTranslation('setup');
  const info = useQuery(setupInfoQueryOptions);
  return (
    <div className="setup">
      <div className="setup__hero">
        <span className="setup__hero-icon" aria-hidden>
          <Rocket />
        </span>
        <h1 className="setup__title">{t('title')}</h1>
        <p className="setup__subtitle">{t('subtitle')}</p>
      </div>
      {info.data ? (
        <SetupForm info={info.data} />
      ) : info.error ? (
        <Alert tone="danger">{t('status.loadFailed', { ns: 'common' })}</Alert>
      ) : (
        <div className="setup__loading">
          <Spinner label={t('loading')} />
        </div>
      )}
    </div>
  );
}

type Outcome = { tone: 'success' | 'danger'; text: string };

/** The setup token the server log links to (`/setup?token=…`), if the address carries one. */
const tokenFromAddress = () => new URLSearchParams(window.location.search).get('token') ?? '';

function SetupForm({ info }: { info: SetupInfo }) {
  const { t } = useTranslation('setup');
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [token, setToken] = useState(tokenFromAddress);
  const {
    register,
    control,
    handleSubmit,
    formState: { errors },
  } = useForm({
    resolver: zodResolver(setupSchema),
    mode: 'onTouched',
    defaultValues: {
      usageMode: 'external',
      account: info.root_init ? undefined : { username: '', password: '', confirmPassword: '' },
      serverAddress: window.location.origin,
    },
  });
  const setup = useMutation({
    mutationFn: (values: SetupValues) =>
      submitSetup({ ...toSetupPayload(values), ...(info.token_required ? { token } : {}) }),
    meta: { silent: true },
    onMutate: () => setOutcome(null),
    onSuccess: () => {
      setOutcome({ tone: 'success', text: t('result.success') });
      setTimeout(() => window.location.assign('/'), RELOAD_DELAY_MS);
    },
    onError: (error) => {
      const text =
        error instanceof ApiError && error.kind === 'app'
          ? localizedMessage(error) || t('result.failed')
          : t('result.requestFailed');
      setOutcome({ tone: 'danger', text });
    },
  });
  const fieldError = (message: string | undefined) =>
    message ? t(message as ParseKeys<'setup'>) : undefined;
  const accountErrors = errors.account;

  return (
    <form className="setup__form" noValidate onSubmit={handleSubmit((v) => setup.mutate(v))}>
      {info.database_type === 'redb' ? (
        <Alert tone="warning" title={t('database.title')}>
          <p>
            <Trans
              t={t}
              i18nKey="database.file"
              values={{ path: DATA_FILE_NAME }}
              components={{ file: <code /> }}
            />
          </p>
          <p>{t('database.location')}</p>
          <p>{t('database.container')}</p>
        </Alert>
      ) : null}

      {info.token_required ? (
        <Card>
          <CardHeader>
            <CardTitle>{t('token.title')}</CardTitle>
            <CardDescription>{t('token.description')}</CardDescription>
          </CardHeader>
          <CardContent>
            <Field id="setup-token" label={t('token.label')}>
              <Input
                id="setup-token"
                autoComplete="off"
                spellCheck={false}
                value={token}
                onChange={(e) => setToken(e.target.value)}
              />
            </Field>
          </CardContent>
        </Card>
      ) : null}

      {info.root_init ? (
        <Alert tone="info" title={t('rootInit.title')}>
          {t('rootInit.body')}
        </Alert>
      ) : (
        <Card>
          <CardHeader>
            <CardTitle>
              <ShieldCheck className="setup__card-icon" aria-hidden />
              {t('admin.title')}
            </CardTitle>
            <CardDescription>{t('admin.description')}</CardDescription>
          </CardHeader>
          <CardContent>
            <Field
              id="setup-username"
              label={t('admin.username.label')}
              error={fieldError(accountErrors?.username?.message)}
            >
              <Input
                id="setup-username"
                autoComplete="username"
                placeholder={t('admin.username.placeholder')}
                aria-invalid={accountErrors?.username ? true : undefined}
                {...register('account.username')}
              />
            </Field>
            <div className="setup__row">
              <Field
                id="setup-password"
                label={t('admin.password.label')}
                error={fieldError(accountErrors?.password?.message)}
              >
                <Input
                  id="setup-password"
                  type="password"
                  autoComplete="new-password"
                  placeholder={t('admin.password.placeholder')}
                  aria-invalid={accountErrors?.password ? true : undefined}
                  {...register('account.password')}
                />
              </Field>
              <Field
                id="setup-confirm-password"
                label={t('admin.confirmPassword.label')}
                error={fieldError(accountErrors?.confirmPassword?.message)}
              >
                <Input
                  id="setup-confirm-password"
                  type="password"
                  autoComplete="new-password"
                  placeholder={t('admin.confirmPassword.placeholder')}
                  aria-invalid={accountErrors?.confirmPassword ? true : undefined}
                  {...register('account.confirmPassword')}
                />
              </Field>
            </div>
          </CardContent>
        </Card>
      )}

      <Card>
        <CardHeader>
          <CardTitle>
            <Globe className="setup__card-icon" aria-hidden />
            {t('server.title')}
          </CardTitle>
          <CardDescription>{t('server.description')}</CardDescription>
        </CardHeader>
        <CardContent>
          <Field
            id="setup-server-address"
            label={t('server.label')}
            error={fieldError(errors.serverAddress?.message)}
          >
            <Input
              id="setup-server-address"
              type="url"
              autoComplete="url"
              spellCheck={false}
              aria-invalid={errors.serverAddress ? true : undefined}
              {...register('serverAddress')}
            />
          </Field>
        </CardContent>
      </Card>

      <Card>
        <CardHeader>
          <CardTitle id="setup-usage-mode">
            <SlidersHorizontal className="setup__card-icon" aria-hidden />
            {t('usageMode.title')}
            <UsageModeHelp />
          </CardTitle>
          <CardDescription>{t('usageMode.hint')}</CardDescription>
        </CardHeader>
        <CardContent>
          <Controller
            control={control}
            name="usageMode"
            render={({ field }) => (
              <RadioGroup
                aria-labelledby="setup-usage-mode"
                value={field.value}
                onValueChange={field.onChange}
              >
                {usageModes.map((mode) => (
                  <RadioCard
                    key={mode}
                    id={`setup-mode-${mode}`}
                    value={mode}
                    label={t(`usageMode.option.${mode}.label`)}
                    description={t(`usageMode.option.${mode}.description`)}
                  />
                ))}
              </RadioGroup>
            )}
          />
        </CardContent>
      </Card>

      {outcome ? <Alert tone={outcome.tone}>{outcome.text}</Alert> : null}

      <Button type="submit" size="lg" disabled={setup.isPending || setup.isSuccess}>
        {setup.isPending ? <Spinner /> : <Database aria-hidden />}
        {setup.isPending ? t('submitting') : t('submit')}
      </Button>
    </form>
  );
}
