import { queryOptions } from '@tanstack/react-query';
import { z } from 'zod/mini';

import { apiRequest } from './client';

/** GET /api/setup `data`. */
export const setupInfoSchema = z.object({
  /** True once the system is initialised. */
  status: z.boolean(),
  root_init: z.boolean(),
  database_type: z.string(),
  /** True when setup needs the one-time token printed in the server log. */
  token_required: z.catch(z.boolean(), false),
});
export type SetupInfo = z.infer<typeof setupInfoSchema>;

/** The body of POST /api/setup (spec 01 §3: the usage mode travels as two booleans). */
export interface SetupPayload {
  username: string;
  password: string;
  confirmPassword: string;
  SelfUseModeEnabled: boolean;
  DemoSiteEnabled: boolean;
  /** Where users reach the console: chat links, OAuth callbacks and mail links use it. */
  ServerAddress?: string;
  /** The one-time setup token from the server log (when `token_required`). */
  token?: string;
}

/** GET /api/setup: whether setup is done, whether root exists, and whether a token is needed. */
export function fetchSetupInfo(): Promise<SetupInfo> {
  return apiRequest('/api/setup', { schema: setupInfoSchema });
}

export const setupInfoQueryOptions = queryOptions({
  queryKey: ['setup'],
  queryFn: fetchSetupInfo,
});

/** POST /api/setup: creates the root admin (unless it exists) and stores the usage mode. */
export function submitSetup(payload: SetupPayload): Promise<void> {
  return apiRequest('/api/setup', { method: 'POST', body: payload });
}
