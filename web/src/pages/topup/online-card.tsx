import { useMutation, useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';

import { localizedMessage } from '@/api/errors';
import { useStatus } from '@/api/status';
import { paymentMethods, quoteAmount, requestPayment, submitPaymentForm } from '@/api/topup';
import type { PaymentMethod } from '@/api/topup';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/components/ui/card';
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
import { toast } from '@/stores/toasts';

import { amountProblem, minimumAmount } from './schema';

/** Quotes wait this long after the last keystroke. */
const QUOTE_DELAY_MS = 300;

function useDebounced<T>(value: T, delay: number): T {
  const [debounced, setDebounced] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setDebounced(value), delay);
    return () => clearTimeout(timer);
  }, [value, delay]);
  return debounced;
}

/** The online top-up box: amount, the quote, payment methods and the confirm dialog. */
export function OnlineTopUpCard() {
  const { t } = useTranslation('topup');
  const status = useStatus();
  const enabled = status.enable_online_topup;
  const min = minimumAmount(status.min_topup);
  const [text, setText] = useState(String(min));
  const [confirming, setConfirming] = useState<PaymentMethod | null>(null);
  const amount = Number(text);
  const problem = amountProblem(amount, min);
  const quoted = useDebounced(amount, QUOTE_DELAY_MS);
  const quote = useQuery({
    queryKey: ['topup', 'quote', quoted],
    queryFn: () => quoteAmount(quoted),
    enabled: enabled && amountProblem(quoted, min) === null,
    meta: { silent: true },
    retry: false,
  });
  const pay = useMutation({
    mutationFn: ({ method }: { method: PaymentMethod }) => requestPayment(amount, method),
    onSuccess: (form) => {
      setConfirming(null);
      submitPaymentForm(form);
    },
  });

  const quoteText = !enabled
    ? null
    : quote.isError
      ? t('online.quoteError', {
          reason: localizedMessage(quote.error),
        })
      : quote.data && !quote.data.ok
        ? t('online.quoteError', { reason: quote.data.reason })
        : quote.data?.ok
          ? t('online.payable', { money: quote.data.money })
          : null;

  const choose = (method: PaymentMethod) => {
    if (!enabled) {
      toast.error(t('online.disabled'));
      return;
    }
    if (problem !== null) {
      toast.error(problem === 'min' ? t('online.tooSmall', { min }) : t('online.integer'));
      return;
    }
    setConfirming(method);
  };

  return (
    <Card>
      <CardHeader>
        <CardTitle>{t('online.title')}</CardTitle>
        <CardDescription>{t('online.description', { min })}</CardDescription>
      </CardHeader>
      <CardContent className="topup__stack">
        {enabled ? null : <Alert tone="info">{t('online.disabled')}</Alert>}
        <Field
          id="topup-amount"
          label={t('online.amount')}
          error={
            problem === 'min'
              ? t('online.tooSmall', { min })
              : problem === 'integer'
                ? t('online.integer')
                : undefined
          }
          hint={quoteText}
        >
          <Input
            id="topup-amount"
            type="number"
            min={min}
            step={1}
            value={text}
            onChange={(e) => setText(e.target.value)}
          />
        </Field>
        <div className="topup__row" role="group" aria-label={t('online.methods')}>
          {paymentMethods.map((method) => (
            <Button
              key={method}
              variant="secondary"
              disabled={pay.isPending}
              onClick={() => choose(method)}
            >
              {t(`online.method.${method}`)}
            </Button>
          ))}
        </div>
      </CardContent>
      <Dialog
        open={confirming !== null}
        onOpenChange={(open) => (open ? undefined : setConfirming(null))}
      >
        <DialogContent>
          <DialogHeader>
            <DialogTitle>{t('confirm.title')}</DialogTitle>
            <DialogDescription>{t('confirm.description')}</DialogDescription>
          </DialogHeader>
          <dl className="topup__facts">
            <dt>{t('confirm.amount')}</dt>
            <dd>{amount}</dd>
            <dt>{t('confirm.payable')}</dt>
            <dd>{quote.data?.ok ? t('confirm.money', { money: quote.data.money }) : '—'}</dd>
            <dt>{t('confirm.method')}</dt>
            <dd>{confirming ? t(`online.method.${confirming}`) : ''}</dd>
          </dl>
          <DialogFooter>
            <DialogClose asChild>
              <Button variant="secondary">{t('confirm.cancel')}</Button>
            </DialogClose>
            <Button
              disabled={pay.isPending}
              onClick={() => confirming && pay.mutate({ method: confirming })}
            >
              {t('confirm.pay')}
            </Button>
          </DialogFooter>
        </DialogContent>
      </Dialog>
    </Card>
  );
}
