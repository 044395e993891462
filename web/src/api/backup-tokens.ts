import { z } from 'zod/mini';

import { apiRequest } from './client';

const tokenSchema = z.object({
  id: z.number(),
  name: z.string(),
  created_at: z.number(),
  last_used_at: z.catch(z.number(), 0),
});
/** A backup token as listed (never the token itself). */
export type BackupToken = z.infer<typeof tokenSchema>;

/** The query of root's backup tokens (GET /api/user/backup_tokens). */
export const backupTokensQuery = {
  queryKey: ['backup-tokens'] as const,
  queryFn: (): Promise<BackupToken[]> =>
    apiRequest('/api/user/backup_tokens', { schema: z.array(tokenSchema) }),
};

const createdSchema = z.extend(tokenSchema, { token: z.string() });
/** A new backup token: the only answer that carries the token. */
export type CreatedBackupToken = z.infer<typeof createdSchema>;

/** POST /api/user/backup_tokens: a backup-only token, made with a two-factor code. */
export function createBackupToken(name: string, code: string): Promise<CreatedBackupToken> {
  return apiRequest('/api/user/backup_tokens', {
    method: 'POST',
    body: { name, code },
    schema: createdSchema,
  });
}

/** DELETE /api/user/backup_tokens/{id}: the token stops working. */
export function revokeBackupToken(id: number): Promise<void> {
  return apiRequest(`/api/user/backup_tokens/${id}`, { method: 'DELETE' });
}
