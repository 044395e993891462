import { useEffect, useRef, useState } from 'react';

/** The editor's id is cleared this long after it closes, so the closing drawer keeps its form. */
export const CLEAR_EDITOR_MS = 500;

/**
 * An editor drawer over a list: opened for a new row (`null`) or a row id; the id is cleared
 * 500 ms after closing (spec 02 §2) so the form does not blank out while the drawer slides away.
 */
export function useEditorDrawer() {
  const [state, setState] = useState<{ open: boolean; id: number | null }>({
    open: false,
    id: null,
  });
  const timer = useRef<ReturnType<typeof setTimeout>>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);
  const close = () => {
    setState((e) => ({ ...e, open: false }));
    timer.current = setTimeout(
      () => setState((e) => (e.open ? e : { ...e, id: null })),
      CLEAR_EDITOR_MS,
    );
  };
  return {
    id: state.id,
    isOpen: state.open,
    open: (id: number | null) => {
      clearTimeout(timer.current);
      setState({ open: true, id });
    },
    close,
    /** For the drawer's `onOpenChange`. */
    onOpenChange: (open: boolean) => (open ? undefined : close()),
  };
}
