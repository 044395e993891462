import { useMatches } from 'react-router';

/** What a route tells the shell about itself, via the route's `handle`. */
export interface RouteHandle {
  /** False on home, chat and setup routes: the side menu is hidden there (spec 01 §2). */
  sidebar?: boolean;
}

/** Whether the current route shows the side menu. */
export function useSidebarVisible(): boolean {
  return !useMatches().some((m) => (m.handle as RouteHandle | undefined)?.sidebar === false);
}
