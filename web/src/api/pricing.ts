import { queryOptions } from '@tanstack/react-query';
import { z } from 'zod/mini';

import { apiEnvelope } from './client';

/** How a model is billed (spec 02 §9): by tokens (ratios) or per call (model_price). */
export const QUOTA_BY_TOKENS = 0;
export const QUOTA_PER_CALL = 1;

export const pricingModelSchema = z.object({
  model_name: z.string(),
  quota_type: z.catch(z.int(), QUOTA_BY_TOKENS),
  model_ratio: z.catch(z.number(), 0),
  completion_ratio: z.catch(z.number(), 1),
  model_price: z.catch(z.number(), 0),
  enable_groups: z.catch(z.array(z.string()), []),
  model_description: z.catch(z.string(), ''),
  /** Tollgate: false for a served model with no price at all. */
  price_set: z.catch(z.boolean(), true),
});
export type PricingModel = z.infer<typeof pricingModelSchema>;

const pricingSchema = z.object({
  data: z.catch(z.array(pricingModelSchema), []),
  group_ratio: z.catch(z.record(z.string(), z.number()), {}),
  usable_group: z.catch(z.record(z.string(), z.string()), {}),
});
export type Pricing = z.infer<typeof pricingSchema>;

/** GET /api/pricing (public): the models, group ratios and the caller's usable groups. */
export const pricingQueryOptions = queryOptions({
  queryKey: ['pricing'],
  queryFn: () => apiEnvelope('/api/pricing', { schema: pricingSchema }),
  staleTime: 60_000,
  meta: { silent: true },
});
