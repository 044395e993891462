import { queryOptions } from '@tanstack/react-query';
import { z } from 'zod/mini';

import { apiRequest } from './client';

/** An extra field a channel type needs: `other`, or a key of the `setting` JSON object. */
export const typeFieldSchema = z.object({
  target: z.enum(['other', 'setting']),
  key: z.catch(z.string(), ''),
  name: z.catch(z.string(), ''),
  kind: z.catch(z.enum(['text', 'select', 'bool']), 'text'),
  options: z.catch(z.array(z.string()), []),
  required: z.catch(z.boolean(), false),
  default: z.catch(z.string(), ''),
  /** i18n key (`channels` namespace). */
  label: z.string(),
  /** i18n key (`channels` namespace), "" = none. */
  help: z.catch(z.string(), ''),
});
export type TypeField = z.infer<typeof typeFieldSchema>;

/** One row of the server's channel type table (GET /api/channel/types). */
export const channelTypeSchema = z.object({
  id: z.int(),
  name: z.string(),
  family: z.catch(z.nullable(z.string()), null),
  default_base_url: z.catch(z.string(), ''),
  base_url_required: z.catch(z.boolean(), false),
  auth: z.catch(z.string(), ''),
  key_format: z.catch(
    z.object({
      kind: z.catch(z.enum(['lines', 'parts', 'aws', 'service_account_json']), 'lines'),
      parts: z.catch(z.array(z.string()), []),
    }),
    { kind: 'lines', parts: [] },
  ),
  /** i18n key of a free-form key hint, "" = none. */
  key_hint: z.catch(z.string(), ''),
  fields: z.catch(z.array(typeFieldSchema), []),
  capabilities: z.catch(z.array(z.string()), []),
  test: z.catch(z.string(), 'none'),
  models: z.catch(z.array(z.string()), []),
});
export type ChannelTypeInfo = z.infer<typeof channelTypeSchema>;

/** The channel type table; it changes only with the server binary. */
export const channelTypesQueryOptions = queryOptions({
  queryKey: ['channel-types'],
  queryFn: () => apiRequest('/api/channel/types', { schema: z.array(channelTypeSchema) }),
  staleTime: Infinity,
});
