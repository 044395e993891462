import { create } from 'zustand';

import { toast } from './toasts';

interface ManualCopyState {
  /** Text the browser refused to copy: shown in a dialog for a manual copy. */
  text: string | null;
  show: (text: string) => void;
  close: () => void;
}

export const useManualCopy = create<ManualCopyState>()((set) => ({
  text: null,
  show: (text) => set({ text }),
  close: () => set({ text: null }),
}));

/**
 * Copies `text` to the clipboard and toasts `successText`; when the browser refuses, opens a
 * dialog with the text for a manual copy (spec 01 §8). Resolves to whether the copy worked.
 */
export async function copyText(text: string, successText: string): Promise<boolean> {
  try {
    if (!navigator.clipboard) throw new Error('no clipboard');
    await navigator.clipboard.writeText(text);
    toast.success(successText);
    return true;
  } catch {
    useManualCopy.getState().show(text);
    return false;
  }
}
