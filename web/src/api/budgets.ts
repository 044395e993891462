import { queryOptions } from '@tanstack/react-query';
import { z } from 'zod/mini';

import { apiRequest } from './client';

/** The length of a budget window. */
export const PERIODS = ['day', 'week', 'month'] as const;
export type Period = (typeof PERIODS)[number];

/** The most windows one list may hold (the server's MAX_WINDOWS). */
export const MAX_WINDOWS = 6;

const windowSchema = z.object({
  period: z.enum(PERIODS),
  /** The last 24 h, 7 or 30 days instead of today, this week, this month. */
  rolling: z.catch(z.boolean(), false),
  /** Units that may be spent in the window. */
  limit: z.number(),
});
export type BudgetWindow = z.infer<typeof windowSchema>;

/** What is set: the windows and an override that replaces them until `until` (Unix seconds). */
export const budgetsSchema = z.object({
  windows: z.catch(z.array(windowSchema), []),
  override: z.catch(
    z.nullable(z.object({ windows: z.catch(z.array(windowSchema), []), until: z.number() })),
    null,
  ),
});
export type Budgets = z.infer<typeof budgetsSchema>;

/** One window in force now, with what was spent in it. */
const windowStateSchema = z.object({
  period: z.enum(PERIODS),
  rolling: z.catch(z.boolean(), false),
  limit: z.number(),
  spent: z.catch(z.number(), 0),
  remaining: z.catch(z.number(), 0),
  /** Unix seconds. */
  resets_at: z.catch(z.number(), 0),
});
export type WindowState = z.infer<typeof windowStateSchema>;

/** GET/PUT /api/token/{id}/budget and /api/user/{id}/budget. */
export const budgetViewSchema = z.object({
  budgets: budgetsSchema,
  windows: z.catch(z.array(windowStateSchema), []),
  time_zone: z.catch(z.string(), 'UTC'),
});
export type BudgetView = z.infer<typeof budgetViewSchema>;

/** Whose budget: one API key (its owner) or one user (an admin). */
export type BudgetOwner = { kind: 'token'; id: number } | { kind: 'user'; id: number };

const budgetPath = (owner: BudgetOwner) => `/api/${owner.kind}/${owner.id}/budget`;

export const budgetQueryOptions = (owner: BudgetOwner) =>
  queryOptions({
    queryKey: ['budget', owner],
    queryFn: () => apiRequest(budgetPath(owner), { schema: budgetViewSchema }),
  });

/** Replaces the owner's budgets; answers what is now in force. */
export function saveBudget(owner: BudgetOwner, budgets: Budgets): Promise<BudgetView> {
  return apiRequest(budgetPath(owner), {
    method: 'PUT',
    body: budgets,
    schema: budgetViewSchema,
  });
}
