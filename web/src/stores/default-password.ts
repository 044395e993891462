import { create } from 'zustand';

interface DefaultPasswordState {
  /** The warning is showing: set by the login page, cleared by the dialog. */
  open: boolean;
  show: () => void;
  close: () => void;
}

/**
 * The default-password warning (spec 01 §2). It lives outside the login page because the
 * page navigates away on success; the shell shows the dialog over the landing page.
 */
export const useDefaultPasswordWarning = create<DefaultPasswordState>()((set) => ({
  open: false,
  show: () => set({ open: true }),
  close: () => set({ open: false }),
}));
