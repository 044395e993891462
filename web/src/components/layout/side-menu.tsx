import {
  FlaskConical,
  KeyRound,
  LayoutDashboard,
  ListChecks,
  MessageSquare,
  Palette,
  PanelLeftClose,
  PanelLeftOpen,
  ScrollText,
  Settings,
  ShieldCheck,
  Ticket,
  UserCog,
  Users,
  Wallet,
  Waypoints,
} from 'lucide-react';
import type { LucideIcon } from 'lucide-react';
import { useTranslation } from 'react-i18next';
import { NavLink } from 'react-router';

import { useStatus } from '@/api/status';
import type { Status } from '@/api/status';
import { isAdmin, ROLE_ROOT } from '@/api/user';
import type { User } from '@/api/user';
import { Tooltip } from '@/components/ui/tooltip';
import type zhCommon from '@/i18n/locales/zh/common.json';
import { storedChats } from '@/lib/chat-links';
import type { ChatLink } from '@/lib/chat-links';
import { usePreferences } from '@/stores/preferences';
import { useSession } from '@/stores/session';

type GroupKey = keyof typeof zhCommon.sidebar.group;
type ItemKey = keyof typeof zhCommon.sidebar.item;

interface MenuItem {
  to: string;
  icon: LucideIcon;
  /** An i18n item key, or a literal label from the status (chat names). */
  label: { key: ItemKey } | { text: string };
}

interface MenuGroup {
  key: GroupKey;
  items: MenuItem[];
}

const item = (to: string, icon: LucideIcon, key: ItemKey): MenuItem => ({
  to,
  icon,
  label: { key },
});

/** The menu of spec 01 §2: flags from the status decide the optional entries, the role the admin group. */
function menuGroups(status: Status, user: User | null, chatLinks: ChatLink[]): MenuGroup[] {
  const chats = chatLinks.map((link, index) => ({
    to: `/chat/${index}`,
    icon: MessageSquare,
    label: { text: link.name },
  }));
  const groups: MenuGroup[] = [
    { key: 'chat', items: [item('/playground', FlaskConical, 'playground'), ...chats] },
    {
      key: 'console',
      items: [
        ...(status.enable_data_export ? [item('/detail', LayoutDashboard, 'detail')] : []),
        item('/token', KeyRound, 'token'),
        item('/log', ScrollText, 'log'),
        ...(status.enable_drawing ? [item('/midjourney', Palette, 'midjourney')] : []),
        ...(status.enable_task ? [item('/task', ListChecks, 'task')] : []),
      ],
    },
  ];
  if (isAdmin(user)) {
    groups.push({
      key: 'admin',
      items: [
        item('/channel', Waypoints, 'channel'),
        item('/redemption', Ticket, 'redemption'),
        item('/user', Users, 'user'),
        item('/setting', Settings, 'setting'),
        ...(user?.role === ROLE_ROOT ? [item('/audit', ShieldCheck, 'audit')] : []),
      ],
    });
  }
  groups.push({
    key: 'personal',
    items: [item('/topup', Wallet, 'topup'), item('/personal', UserCog, 'personal')],
  });
  return groups;
}

/** The user's collapse choice, else the administrator's default from the status. */
export function useSidebarCollapsed(): boolean {
  const chosen = usePreferences((s) => s.sidebarCollapsed);
  const { default_collapse_sidebar: byDefault } = useStatus();
  return chosen ?? byDefault;
}

/** The side menu: 200 px, or 60 px collapsed (kept as `default_collapse_sidebar`). */
export function SideMenu({ onNavigate }: { onNavigate?: () => void }) {
  const { t } = useTranslation();
  const status = useStatus();
  const user = useSession((s) => s.user);
  const collapsed = useSidebarCollapsed();
  const setCollapsed = usePreferences((s) => s.setSidebarCollapsed);
  const ToggleIcon = collapsed ? PanelLeftOpen : PanelLeftClose;
  const toggleLabel = collapsed ? t('sidebar.expand') : t('sidebar.collapse');
  // The chat submenu is built from the locally kept chats (spec 01 §2), mirrored from the status.
  const chats = storedChats();

  return (
    <aside className="side-menu" data-collapsed={collapsed} aria-label={t('sidebar.label')}>
      <nav className="side-menu__groups">
        {menuGroups(status, user, chats.links).map((group) => (
          <div key={group.key} className="side-menu__group">
            <p className="side-menu__heading">{t(`sidebar.group.${group.key}`)}</p>
            {group.key === 'chat' && chats.error ? (
              <p className="side-menu__problem" role="alert">
                {t('chat.parseFailed', { ns: 'content' })}
              </p>
            ) : null}
            {group.items.map(({ to, icon: Icon, label }) => {
              const text = 'key' in label ? t(`sidebar.item.${label.key}`) : label.text;
              return (
                <Tooltip key={to} content={text} enabled={collapsed}>
                  <NavLink
                    to={to}
                    className="side-menu__item"
                    aria-label={collapsed ? text : undefined}
                    onClick={onNavigate}
                  >
                    <Icon className="side-menu__icon" aria-hidden />
                    <span className="side-menu__label">{text}</span>
                  </NavLink>
                </Tooltip>
              );
            })}
          </div>
        ))}
      </nav>
      <button
        type="button"
        className="side-menu__toggle"
        aria-label={toggleLabel}
        title={toggleLabel}
        onClick={() => setCollapsed(!collapsed)}
      >
        <ToggleIcon aria-hidden />
      </button>
    </aside>
  );
}
