import { useEffect, useState } from 'react';
import { Outlet } from 'react-router';

import { useStatus } from '@/api/status';
import { DefaultPasswordDialog } from '@/components/common/default-password-dialog';
import { ManualCopyDialog } from '@/components/common/manual-copy-dialog';
import { TooltipProvider } from '@/components/ui/tooltip';
import { useSession } from '@/stores/session';

import { Footer } from './footer';
import { useSidebarVisible } from './route-handle';
import { ServerAddressWarning } from './server-address-warning';
import { SideMenu, useSidebarCollapsed } from './side-menu';
import { TopBar } from './top-bar';

import './shell.css';

/** Applies the status's system name and logo to the tab title and icon. */
function useDocumentBranding(systemName: string, logo: string): void {
  useEffect(() => {
    if (systemName) document.title = systemName;
    if (logo) {
      const icon = document.querySelector<HTMLLinkElement>('link[rel="icon"]');
      if (icon) icon.href = logo;
    }
  }, [systemName, logo]);
}

/** Top bar, side menu (where the route has one), the page and the footer. */
export function AppShell() {
  const status = useStatus();
  // Every side-menu entry is a console page: a guest would only bounce to /login.
  const signedIn = useSession((s) => s.user !== null);
  const withSidebar = useSidebarVisible() && signedIn && status.setup;
  const collapsed = useSidebarCollapsed();
  const [mobileSidebarOpen, setMobileSidebarOpen] = useState(false);
  useDocumentBranding(status.system_name, status.logo);

  return (
    <TooltipProvider delayDuration={250}>
      <div
        className="shell"
        data-sidebar={withSidebar ? (collapsed ? 'collapsed' : 'expanded') : 'none'}
        data-mobile-sidebar={mobileSidebarOpen}
      >
        <TopBar
          withSidebar={withSidebar}
          mobileSidebarOpen={mobileSidebarOpen}
          onMobileSidebarChange={setMobileSidebarOpen}
        />
        {withSidebar ? <SideMenu onNavigate={() => setMobileSidebarOpen(false)} /> : null}
        <div className="shell__main">
          <main className="shell__content">
            {signedIn ? <ServerAddressWarning /> : null}
            <Outlet />
          </main>
          <Footer />
        </div>
      </div>
      <ManualCopyDialog />
      <DefaultPasswordDialog />
    </TooltipProvider>
  );
}
