import { keepPreviousData, queryOptions } from '@tanstack/react-query';
import { z } from 'zod/mini';

import { apiRequest } from './client';

/** One row of the audit log (root only): who did what to what, before and after. */
export const auditEntrySchema = z.object({
  id: z.int(),
  created_at: z.catch(z.number(), 0),
  actor_id: z.catch(z.number(), 0),
  actor_name: z.catch(z.string(), ''),
  action: z.catch(z.string(), ''),
  target: z.catch(z.string(), ''),
  before: z.catch(z.string(), ''),
  after: z.catch(z.string(), ''),
  ip: z.catch(z.string(), ''),
});
export type AuditEntry = z.infer<typeof auditEntrySchema>;

export const auditPageSchema = z.object({
  items: z.catch(z.array(auditEntrySchema), []),
  total: z.catch(z.int(), 0),
});
export type AuditPage = z.infer<typeof auditPageSchema>;

export interface AuditQuery {
  /** An action, or a prefix ending in `.` (`user.`). */
  action: string;
  target: string;
  page: number;
  pageSize: number;
}

/** GET /api/audit: newest first, server-paged, filtered by action and target. */
export function fetchAudit({ action, target, page, pageSize }: AuditQuery): Promise<AuditPage> {
  return apiRequest('/api/audit', {
    query: {
      p: page,
      page_size: pageSize,
      action: action.trim() || undefined,
      target: target.trim() || undefined,
    },
    schema: auditPageSchema,
  });
}

export const auditQueryOptions = (query: AuditQuery) =>
  queryOptions({
    queryKey: ['audit', query],
    queryFn: () => fetchAudit(query),
    placeholderData: keepPreviousData,
  });
