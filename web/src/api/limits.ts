import { queryOptions } from '@tanstack/react-query';
import { z } from 'zod/mini';

import { apiRequest } from './client';

/** The four limits of an owner (0 = none). */
export const LIMIT_FIELDS = ['concurrency_limit', 'rpm_limit', 'tpm_limit', 'rpd_limit'] as const;
export type LimitField = (typeof LIMIT_FIELDS)[number];

const limitsShape = {
  concurrency_limit: z.catch(z.number(), 0),
  rpm_limit: z.catch(z.number(), 0),
  tpm_limit: z.catch(z.number(), 0),
  rpd_limit: z.catch(z.number(), 0),
};

/** GET/PUT /api/{token,user,channel}/{id}/limits. */
export const limitsSchema = z.object({
  ...limitsShape,
  key_limits: z.catch(z.array(z.object({ index: z.number(), ...limitsShape })), []),
});
export type OwnerLimits = z.infer<typeof limitsSchema>;

/** Whose limits. */
export type LimitsOwner = { kind: 'token' | 'user' | 'channel'; id: number };

const limitsPath = (owner: LimitsOwner) => `/api/${owner.kind}/${owner.id}/limits`;

export const limitsQueryOptions = (owner: LimitsOwner) =>
  queryOptions({
    queryKey: ['limits', owner],
    queryFn: () => apiRequest(limitsPath(owner), { schema: limitsSchema }),
  });

/** Replaces the owner's limits; answers what is stored. */
export function saveLimits(owner: LimitsOwner, limits: OwnerLimits): Promise<OwnerLimits> {
  return apiRequest(limitsPath(owner), { method: 'PUT', body: limits, schema: limitsSchema });
}
