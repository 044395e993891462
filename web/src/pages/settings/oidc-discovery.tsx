import { useMutation } from '@tanstack/react-query';
import { Download } from 'lucide-react';
import { useTranslation } from 'react-i18next';

import { discoverOidc } from '@/api/oidc';
import { Button } from '@/components/ui/button';
import { toast } from '@/stores/toasts';

import type { SectionForm } from './option-section';

/** The endpoint options a discovery document fills, by the answer's field. */
const filled = {
  authorization_endpoint: 'oidc.authorization_endpoint',
  token_endpoint: 'oidc.token_endpoint',
  user_info_endpoint: 'oidc.user_info_endpoint',
} as const;

/**
 * 获取 OIDC 配置: reads the well-known URL typed in the OIDC section through the server and
 * fills the three endpoints into the form (saved with the section's button), with the spec's
 * success and failure messages (spec 01 §5, §8).
 */
export function OidcDiscovery({ form }: { form: SectionForm }) {
  const { t } = useTranslation('settings');
  const discover = useMutation({
    mutationFn: discoverOidc,
    meta: { silent: true },
    onSuccess: (endpoints) => {
      const values: Record<string, string> = {};
      for (const [field, key] of Object.entries(filled)) {
        const value = endpoints[field as keyof typeof filled];
        if (value !== '') values[key] = value;
      }
      form.fill(values);
      toast.success(t('oidc.fetched'));
    },
    onError: () => toast.error(t('oidc.fetchFailed')),
  });
  return (
    <Button
      type="button"
      variant="secondary"
      disabled={discover.isPending}
      onClick={() => {
        const url = (form.draft['oidc.well_known'] ?? '').trim();
        if (!/^https?:\/\//.test(url)) {
          toast.error(t('validation.httpUrl'));
          return;
        }
        discover.mutate(url);
      }}
    >
      <Download aria-hidden />
      {t('oidc.fetch')}
    </Button>
  );
}
