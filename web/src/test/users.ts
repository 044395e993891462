import { userSchema } from '@/api/user';
import type { User } from '@/api/user';

/** A complete user record for tests: the schema's defaults plus `fields`. */
export function makeUser(fields: { id: number; username: string } & Record<string, unknown>): User {
  return userSchema.parse(fields);
}
