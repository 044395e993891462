import { z } from 'zod/mini';

/** Role threshold (spec 01 §6): role ≥ 10 is an admin (≥ 100 a super admin). */
export const ROLE_ADMIN = 10;

/** The signed-in user as the server returns it from login and as it is kept locally (`user`). */
export const userSchema = z.looseObject({
  id: z.int(),
  username: z.string(),
  display_name: z.catch(z.string(), ''),
  role: z.catch(z.int(), 1),
  status: z.catch(z.int(), 1),
  group: z.catch(z.string(), 'default'),
});
export type User = z.infer<typeof userSchema>;

/** Whether the user may see the admin menu group. */
export const isAdmin = (user: User | null): boolean => (user?.role ?? 0) >= ROLE_ADMIN;
