import { z } from 'zod/mini';
import { create } from 'zustand';
import { persist } from 'zustand/middleware';

import { userSchema } from '@/api/user';
import type { User } from '@/api/user';
import { jsonKey, keyedStorage } from '@/lib/keyed-storage';

/** A stored user that no longer parses is dropped: the user signs in again. */
const storedUserSchema = z.catch(z.nullable(userSchema), null);

interface SessionState {
  /** The signed-in user, kept locally as `user`; null for a guest. */
  user: User | null;
  setUser: (user: User) => void;
  clearUser: () => void;
}

/** The local session (spec 01 §4): login stores the user, logout and a 401 clear it. */
export const useSession = create<SessionState>()(
  persist(
    (set) => ({
      user: null,
      setUser: (user) => set({ user }),
      clearUser: () => set({ user: null }),
    }),
    {
      name: 'session',
      storage: keyedStorage<{ user: User | null }>({ user: jsonKey('user') }),
      partialize: ({ user }) => ({ user }),
      merge: (persisted, current) => ({
        ...current,
        user: storedUserSchema.parse((persisted as { user?: unknown } | undefined)?.user ?? null),
      }),
    },
  ),
);
