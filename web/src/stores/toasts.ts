import { create } from 'zustand';

export type ToastTone = 'success' | 'error' | 'info';

export interface Toast {
  id: number;
  tone: ToastTone;
  text: string;
}

interface ToastState {
  toasts: Toast[];
  push: (tone: ToastTone, text: string) => void;
  dismiss: (id: number) => void;
}

let nextId = 1;

/** Transient notifications shown by the toaster; the text is already translated. */
export const useToasts = create<ToastState>()((set) => ({
  toasts: [],
  push: (tone, text) => set((s) => ({ toasts: [...s.toasts, { id: nextId++, tone, text }] })),
  dismiss: (id) => set((s) => ({ toasts: s.toasts.filter((t) => t.id !== id) })),
}));

/** Shorthands usable outside React (API error handling, mutations). */
export const toast = {
  success: (text: string) => useToasts.getState().push('success', text),
  error: (text: string) => useToasts.getState().push('error', text),
  info: (text: string) => useToasts.getState().push('info', text),
};
