import { useMutation, useQueryClient } from '@tanstack/react-query';
import { ExternalLink, Gift } from 'lucide-react';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';

import { ApiError, notifyApiError } from '@/api/errors';
import { useStatus } from '@/api/status';
import { redeemCode } from '@/api/topup';
import { Button } from '@/components/ui/button';
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/components/ui/card';
import { Input } from '@/components/ui/input';
import { useFormatQuota } from '@/lib/use-format-quota';
import { toast } from '@/stores/toasts';

/** The redeem-code box, with the way to buy codes when a top-up link is set. */
export function RedeemCard() {
  const { t } = useTranslation('topup');
  const status = useStatus();
  const formatQuota = useFormatQuota();
  const queryClient = useQueryClient();
  const [code, setCode] = useState('');
  const redeem = useMutation({
    mutationFn: redeemCode,
    meta: { silent: true },
    onSuccess: (quota) => {
      toast.success(t('redeem.success', { quota: formatQuota(quota) }));
      setCode('');
      void queryClient.invalidateQueries({ queryKey: ['self'] });
    },
    onError: (error) => {
      // A refusal says why; a call that failed on the way is just 请求失败 (spec 02 §8).
      const refused = error instanceof ApiError && (error.kind === 'app' || error.kind === 'http');
      if (refused) notifyApiError(error);
      else toast.error(t('redeem.failed'));
    },
  });

  return (
    <Card>
      <CardHeader>
        <CardTitle>{t('redeem.title')}</CardTitle>
        <CardDescription>{t('redeem.description')}</CardDescription>
      </CardHeader>
      <CardContent>
        <form
          className="topup__row"
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            const key = code.trim();
            if (key === '') {
              toast.error(t('redeem.empty'));
              return;
            }
            redeem.mutate(key);
          }}
        >
          <Input
            aria-label={t('redeem.code')}
            placeholder={t('redeem.placeholder')}
            autoComplete="off"
            value={code}
            onChange={(e) => setCode(e.target.value)}
          />
          <Button type="submit" disabled={redeem.isPending}>
            <Gift aria-hidden />
            {t('redeem.submit')}
          </Button>
          <Button
            variant="secondary"
            onClick={() => {
              if (!status.top_up_link) {
                toast.error(t('redeem.noLink'));
                return;
              }
              window.open(status.top_up_link, '_blank', 'noopener');
            }}
          >
            <ExternalLink aria-hidden />
            {t('redeem.buy')}
          </Button>
        </form>
      </CardContent>
    </Card>
  );
}
