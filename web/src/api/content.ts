import { queryOptions } from '@tanstack/react-query';
import { z } from 'zod/mini';

import { apiRequest } from './client';

/** A custom top-bar link (CustemNavLinks, spec 01 §3). */
export const navLinkSchema = z.object({
  text: z.string(),
  item_key: z.string(),
  url: z.string(),
});
export type NavLink = z.infer<typeof navLinkSchema>;

/** An advantage block of the default home page (Advantages, spec 02 §3). */
export const advantageSchema = z.object({
  id: z.optional(z.union([z.number(), z.string()])),
  title: z.string(),
  description: z.string(),
  icon: z.optional(z.string()),
  color: z.optional(z.string()),
});
export type Advantage = z.infer<typeof advantageSchema>;

/** A provider block of the default home page (Providers, spec 02 §3). */
export const providerSchema = z.object({
  id: z.optional(z.union([z.number(), z.string()])),
  name: z.string(),
  icon: z.optional(z.string()),
  includes: z.optional(z.array(z.string())),
});
export type Provider = z.infer<typeof providerSchema>;

/** The home blocks' shapes: what the settings form checks before saving and the home reads. */
export const homeBlockSchemas = {
  Providers: z.array(providerSchema),
  CustemNavLinks: z.array(navLinkSchema),
  TypingList: z.array(z.string()),
  Advantages: z.array(advantageSchema),
  ModelDescriptions: z.record(z.string(), z.string()),
} as const;
export type HomeBlock = keyof typeof homeBlockSchemas;

/** Read as empty when an old stored value has another shape: the home page still renders. */
const lenient = <S extends z.ZodMiniType>(schema: S, empty: z.output<S>) => z.catch(schema, empty);

const text = (path: string) => () => apiRequest(path, { schema: z.catch(z.string(), '') });

/** Public content (spec 01 §3 Content): GET /api/notice, /api/about, /api/home_page_content. */
export const noticeQueryOptions = queryOptions({
  queryKey: ['content', 'notice'],
  queryFn: text('/api/notice'),
  meta: { silent: true },
});
export const aboutQueryOptions = queryOptions({
  queryKey: ['content', 'about'],
  queryFn: text('/api/about'),
  meta: { silent: true },
});
export const homeContentQueryOptions = queryOptions({
  queryKey: ['content', 'home'],
  queryFn: text('/api/home_page_content'),
  meta: { silent: true },
});

export const navLinksQueryOptions = queryOptions({
  queryKey: ['content', 'navLinks'],
  queryFn: () =>
    apiRequest('/api/option/getCustomNavLinks', {
      schema: lenient(homeBlockSchemas.CustemNavLinks, []),
    }),
  staleTime: 5 * 60_000,
  meta: { silent: true },
});

/** The default home page's blocks, read together. */
export const homeBlocksQueryOptions = queryOptions({
  queryKey: ['content', 'homeBlocks'],
  queryFn: async () => {
    const [typing, advantages, providers] = await Promise.all([
      apiRequest('/api/option/getTypingList', {
        schema: lenient(homeBlockSchemas.TypingList, []),
      }),
      apiRequest('/api/option/getAdvantages', {
        schema: lenient(homeBlockSchemas.Advantages, []),
      }),
      apiRequest('/api/option/getModelProviders', {
        schema: lenient(homeBlockSchemas.Providers, []),
      }),
    ]);
    return { typing, advantages, providers };
  },
  meta: { silent: true },
});
