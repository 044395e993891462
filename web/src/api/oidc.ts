import { z } from 'zod/mini';

import { apiRequest } from './client';

const endpointsSchema = z.object({
  authorization_endpoint: z.catch(z.string(), ''),
  token_endpoint: z.catch(z.string(), ''),
  user_info_endpoint: z.catch(z.string(), ''),
});
export type OidcEndpoints = z.infer<typeof endpointsSchema>;

/**
 * POST /api/option/oidc_discovery (root): the server reads the provider's well-known document
 * (a browser cannot, for lack of CORS) and answers its endpoints.
 */
export function discoverOidc(wellKnown: string): Promise<OidcEndpoints> {
  return apiRequest('/api/option/oidc_discovery', {
    method: 'POST',
    body: { well_known: wellKnown },
    schema: endpointsSchema,
  });
}
