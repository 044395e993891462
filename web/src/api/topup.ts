import { keepPreviousData, queryOptions } from '@tanstack/react-query';
import { z } from 'zod/mini';

import { apiEnvelope, apiRequest } from './client';

/** Payment types of the Epay gateway (spec 02 §7). */
export const paymentMethods = ['zfb', 'wx'] as const;
export type PaymentMethod = (typeof paymentMethods)[number];

/** POST /api/user/topup {key}: redeems a code; the answer is the quota added. */
export function redeemCode(key: string): Promise<number> {
  return apiRequest('/api/user/topup', { method: 'POST', body: { key }, schema: z.number() });
}

/** The outcome of a quote: the payable amount, or the refusal the server put in `data`. */
export type Quote = { ok: true; money: string } | { ok: false; reason: string };

const quoteSchema = z.object({
  success: z.boolean(),
  message: z.catch(z.string(), ''),
  data: z.catch(z.union([z.string(), z.number()]), ''),
});

/**
 * POST /api/user/amount {amount, top_up_code}: the money payable. new-api answers a refusal as
 * `success: false` with the reason in `data`; a 4xx carries it in `message` (thrown).
 */
export async function quoteAmount(amount: number, topUpCode = ''): Promise<Quote> {
  const answer = await apiEnvelope('/api/user/amount', {
    method: 'POST',
    body: { amount, top_up_code: topUpCode },
    schema: quoteSchema,
    acceptFailure: true,
  });
  if (!answer.success) return { ok: false, reason: String(answer.data || answer.message) };
  return { ok: true, money: String(answer.data) };
}

const paymentSchema = z.object({
  data: z.record(z.string(), z.union([z.string(), z.number()])),
  url: z.string(),
});
export type PaymentForm = z.infer<typeof paymentSchema>;

/** POST /api/user/pay: the signed form fields and the gateway URL to post them to. */
export function requestPayment(
  amount: number,
  paymentMethod: PaymentMethod,
  topUpCode = '',
): Promise<PaymentForm> {
  return apiEnvelope('/api/user/pay', {
    method: 'POST',
    body: { amount, top_up_code: topUpCode, payment_method: paymentMethod },
    schema: paymentSchema,
  });
}

/**
 * Posts the gateway form from a hidden form element: in a new tab, except on Safari, which
 * blocks a form posted to a new window outside the click (spec 02 §7).
 */
export function submitPaymentForm({ data, url }: PaymentForm): void {
  const form = document.createElement('form');
  form.method = 'POST';
  form.action = url;
  const safari = /^((?!chrome|android).)*safari/i.test(navigator.userAgent);
  if (!safari) form.target = '_blank';
  for (const [name, value] of Object.entries(data)) {
    const input = document.createElement('input');
    input.type = 'hidden';
    input.name = name;
    input.value = String(value);
    form.append(input);
  }
  document.body.append(form);
  form.submit();
  form.remove();
}

export const topUpSchema = z.object({
  id: z.int(),
  amount: z.catch(z.number(), 0),
  money: z.catch(z.number(), 0),
  quota: z.catch(z.number(), 0),
  trade_no: z.catch(z.string(), ''),
  payment_method: z.catch(z.string(), ''),
  status: z.catch(z.string(), ''),
  create_time: z.catch(z.number(), 0),
  complete_time: z.catch(z.number(), 0),
});
export type TopUp = z.infer<typeof topUpSchema>;

const topUpPageSchema = z.object({
  items: z.catch(z.array(topUpSchema), []),
  page: z.catch(z.int(), 1),
  page_size: z.catch(z.int(), 10),
  total: z.catch(z.int(), 0),
});

/** GET /api/user/topup/self: the user's online top-up orders, newest first. */
export const topUpsQueryOptions = (page: number, pageSize: number) =>
  queryOptions({
    queryKey: ['self', 'topups', page, pageSize],
    queryFn: () =>
      apiRequest('/api/user/topup/self', {
        query: { p: page, page_size: pageSize },
        schema: topUpPageSchema,
      }),
    placeholderData: keepPreviousData,
  });
