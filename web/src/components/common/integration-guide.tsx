import { Copy } from 'lucide-react';
import { Tabs } from 'radix-ui';
import { useTranslation } from 'react-i18next';

import { useStatus } from '@/api/status';
import { Button } from '@/components/ui/button';
import {
  Dialog,
  DialogContent,
  DialogDescription,
  DialogHeader,
  DialogTitle,
} from '@/components/ui/dialog';
import { copyText } from '@/stores/manual-copy';

import { chatSnippet, serverBaseUrl, snippetLanguages } from './integration-snippets';

import './integration-guide.css';

/** The model the samples use when the caller names none. */
const DEFAULT_MODEL = 'gpt-4o-mini';

export interface IntegrationGuideProps {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  /** The model in the samples. */
  model?: string;
  /** A real key to put in the samples; a placeholder otherwise. */
  apiKey?: string;
}

/** The API-integration guide drawer: base URL and samples for POST /v1/chat/completions. */
export function IntegrationGuide({ open, onOpenChange, model, apiKey }: IntegrationGuideProps) {
  const { t } = useTranslation();
  const status = useStatus();
  const baseUrl = serverBaseUrl(status.server_address);
  const input = {
    baseUrl,
    apiKey: apiKey ?? t('guide.keyPlaceholder'),
    model: model || DEFAULT_MODEL,
  };
  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent side="right" size="narrow">
        <DialogHeader>
          <DialogTitle>{t('guide.title')}</DialogTitle>
          <DialogDescription>{t('guide.description')}</DialogDescription>
        </DialogHeader>
        <dl className="guide__facts">
          <dt>{t('guide.baseUrl')}</dt>
          <dd>
            <code>{`${baseUrl}/v1`}</code>
          </dd>
          <dt>{t('guide.endpoint')}</dt>
          <dd>
            <code>POST /v1/chat/completions</code>
          </dd>
          <dt>{t('guide.auth')}</dt>
          <dd>
            <code>{`Authorization: Bearer ${input.apiKey}`}</code>
          </dd>
        </dl>
        <Tabs.Root defaultValue="curl" className="guide__tabs">
          <Tabs.List className="guide__tab-list" aria-label={t('guide.language')}>
            {snippetLanguages.map((lang) => (
              <Tabs.Trigger key={lang.id} value={lang.id} className="guide__tab">
                {lang.label}
              </Tabs.Trigger>
            ))}
          </Tabs.List>
          {snippetLanguages.map((lang) => {
            const code = chatSnippet(lang.id, input);
            return (
              <Tabs.Content key={lang.id} value={lang.id} className="guide__panel">
                <Button
                  size="sm"
                  variant="secondary"
                  className="guide__copy"
                  onClick={() => void copyText(code, t('guide.copied'))}
                >
                  <Copy aria-hidden />
                  {t('guide.copy')}
                </Button>
                <pre className="guide__code">
                  <code>{code}</code>
                </pre>
              </Tabs.Content>
            );
          })}
        </Tabs.Root>
      </DialogContent>
    </Dialog>
  );
}
