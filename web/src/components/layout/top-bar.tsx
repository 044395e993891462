import { Menu } from 'lucide-react';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';

import { useStatus } from '@/api/status';
import { Button } from '@/components/ui/button';
import { Dialog, DialogContent, DialogTitle, DialogTrigger } from '@/components/ui/dialog';
import { Switch } from '@/components/ui/switch';

import { Brand } from './brand';
import { LanguageMenu } from './language-menu';
import { ThemeToggle } from './theme-toggle';
import { TopNavLinks } from './top-nav-links';
import { UsageModeBadge } from './usage-mode-badge';
import { UserMenu } from './user-menu';

export interface TopBarProps {
  /** Whether this route has a side menu the mobile drawer can show or hide. */
  withSidebar: boolean;
  mobileSidebarOpen: boolean;
  onMobileSidebarChange: (open: boolean) => void;
}

/** The 56 px top bar; under 600 px its links move into a drawer (spec 01 §2). */
export function TopBar({ withSidebar, mobileSidebarOpen, onMobileSidebarChange }: TopBarProps) {
  const { t } = useTranslation();
  // Before setup every path leads back to /setup: links there would only bounce.
  const { setup } = useStatus();
  const [drawerOpen, setDrawerOpen] = useState(false);
  const closeDrawer = () => setDrawerOpen(false);
  return (
    <header className="top-bar">
      <Dialog open={drawerOpen} onOpenChange={setDrawerOpen}>
        <DialogTrigger asChild>
          <Button
            variant="ghost"
            size="icon"
            className="top-bar__menu"
            aria-label={t('mobile.openMenu')}
          >
            <Menu aria-hidden />
          </Button>
        </DialogTrigger>
        <DialogContent side="left" aria-describedby={undefined}>
          <DialogTitle className="visually-hidden">{t('mobile.menuTitle')}</DialogTitle>
          <Brand onNavigate={closeDrawer} />
          {setup ? <TopNavLinks orientation="vertical" onNavigate={closeDrawer} /> : null}
          {withSidebar ? (
            <label className="drawer-switch" htmlFor="mobile-sidebar-switch">
              {t('mobile.showSidebar')}
              <Switch
                id="mobile-sidebar-switch"
                checked={mobileSidebarOpen}
                onCheckedChange={onMobileSidebarChange}
              />
            </label>
          ) : null}
        </DialogContent>
      </Dialog>
      <div className="top-bar__brand">
        <Brand />
        <UsageModeBadge />
      </div>
      <div className="top-bar__nav">{setup ? <TopNavLinks orientation="horizontal" /> : null}</div>
      <div className="top-bar__actions">
        <ThemeToggle />
        <LanguageMenu />
        {setup ? <UserMenu /> : null}
      </div>
    </header>
  );
}
