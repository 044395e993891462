import { useMutation } from '@tanstack/react-query';
import { Copy, Eye, EyeOff } from 'lucide-react';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';

import { revealChannelKey } from '@/api/channels';
import { ApiError, localizedMessage } from '@/api/errors';
import { verifySession } from '@/api/two-factor';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Field } from '@/components/ui/field';
import { Input } from '@/components/ui/input';
import { copyText } from '@/stores/manual-copy';
import { toast } from '@/stores/toasts';

/**
 * Root only: reveals a channel's stored key after a two-factor code (POST /api/verify, then
 * POST /api/channel/{id}/key; the server audits every reveal). A root without two-factor is
 * pointed to the personal settings to turn it on. The key lives in this component's state only,
 * so it is gone once the editor drawer closes.
 */
export function KeyReveal({ channelId }: { channelId: number }) {
  const { t } = useTranslation('channels');
  const [asking, setAsking] = useState(false);
  const [code, setCode] = useState('');
  const [needsTwoFactor, setNeedsTwoFactor] = useState(false);
  const reveal = useMutation({
    mutationFn: async () => {
      await verifySession(code);
      return revealChannelKey(channelId);
    },
    meta: { silent: true },
    onSuccess: () => {
      setCode('');
      setAsking(false);
    },
    onError: (error) => {
      if (error instanceof ApiError && error.code === 'two_factor_not_enabled') {
        setNeedsTwoFactor(true);
        return;
      }
      toast.error(t('reveal.failed', { message: localizedMessage(error) }));
    },
  });
  const key = reveal.data;

  if (key !== undefined) {
    return (
      <Field id="channel-revealed-key" label={t('reveal.label')} hint={t('reveal.hint')}>
        <div className="channel-edit__inline">
          <textarea
            id="channel-revealed-key"
            className="ui-input channels__json"
            rows={Math.min(6, Math.max(2, key.split('\n').length))}
            readOnly
            spellCheck={false}
            value={key}
          />
          <div className="channel-edit__stack">
            <Button
              type="button"
              variant="secondary"
              size="sm"
              onClick={() => void copyText(key, t('reveal.copied'))}
            >
              <Copy aria-hidden />
              {t('reveal.copy')}
            </Button>
            <Button type="button" variant="ghost" size="sm" onClick={() => reveal.reset()}>
              <EyeOff aria-hidden />
              {t('reveal.hide')}
            </Button>
          </div>
        </div>
      </Field>
    );
  }

  if (needsTwoFactor) {
    return (
      <Alert tone="warning">
        {t('reveal.twoFactorOff')} <Link to="/personal">{t('reveal.openSettings')}</Link>
      </Alert>
    );
  }

  if (!asking) {
    return (
      <div>
        <Button type="button" variant="ghost" size="sm" onClick={() => setAsking(true)}>
          <Eye aria-hidden />
          {t('reveal.start')}
        </Button>
      </div>
    );
  }

  const submit = () => {
    if (code.trim() === '') {
      toast.error(t('reveal.codeRequired'));
      return;
    }
    reveal.mutate();
  };
  return (
    <Field id="channel-reveal-code" label={t('reveal.code')} hint={t('reveal.audited')}>
      <div className="channel-edit__inline">
        <Input
          id="channel-reveal-code"
          autoComplete="one-time-code"
          value={code}
          onChange={(e) => setCode(e.target.value)}
          onKeyDown={(e) => {
            // Enter reveals instead of submitting the channel form around it.
            if (e.key === 'Enter') {
              e.preventDefault();
              submit();
            }
          }}
        />
        <Button type="button" size="sm" disabled={reveal.isPending} onClick={submit}>
          {t('reveal.submit')}
        </Button>
        <Button
          type="button"
          variant="ghost"
          size="sm"
          onClick={() => {
            setCode('');
            setAsking(false);
          }}
        >
          {t('reveal.cancel')}
        </Button>
      </div>
    </Field>
  );
}
