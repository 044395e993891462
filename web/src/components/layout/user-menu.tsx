import { useMutation, useQueryClient } from '@tanstack/react-query';
import { LogOut, UserCog } from 'lucide-react';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate } from 'react-router';

import { logout } from '@/api/auth';
import { useStatus } from '@/api/status';
import { Button } from '@/components/ui/button';
import {
  DropdownMenu,
  DropdownMenuContent,
  DropdownMenuItem,
  DropdownMenuLabel,
  DropdownMenuSeparator,
  DropdownMenuTrigger,
} from '@/components/ui/dropdown-menu';
import { useSession } from '@/stores/session';
import { toast } from '@/stores/toasts';

/** The signed-in user's menu, or sign-in and sign-up links for a guest. */
export function UserMenu() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const user = useSession((s) => s.user);
  const clearUser = useSession((s) => s.clearUser);
  const { self_use_mode_enabled: selfUse } = useStatus();
  const queryClient = useQueryClient();
  // The local session ends even when the server cannot be reached: the user asked to leave.
  const signOut = useMutation({
    mutationFn: logout,
    onSuccess: () => toast.success(t('userMenu.logoutSuccess')),
    onSettled: () => {
      clearUser();
      queryClient.removeQueries({ queryKey: ['self'] });
      queryClient.removeQueries({ queryKey: ['users'] });
      void navigate('/login');
    },
  });

  if (!user) {
    return (
      <div className="user-links">
        <Button asChild variant="ghost" size="sm">
          <Link to="/login">{t('nav.login')}</Link>
        </Button>
        {selfUse ? null : (
          <Button asChild size="sm">
            <Link to="/register">{t('nav.register')}</Link>
          </Button>
        )}
      </div>
    );
  }

  const name = user.display_name || user.username;
  return (
    <DropdownMenu>
      <DropdownMenuTrigger asChild>
        <button type="button" className="user-trigger" aria-label={t('userMenu.open')}>
          <span className="user-trigger__avatar" aria-hidden>
            {name.slice(0, 1).toUpperCase()}
          </span>
          <span className="user-trigger__name">{name}</span>
        </button>
      </DropdownMenuTrigger>
      <DropdownMenuContent>
        <DropdownMenuLabel>{user.username}</DropdownMenuLabel>
        <DropdownMenuSeparator />
        <DropdownMenuItem onSelect={() => void navigate('/personal')}>
          <UserCog aria-hidden />
          {t('userMenu.personal')}
        </DropdownMenuItem>
        <DropdownMenuItem disabled={signOut.isPending} onSelect={() => signOut.mutate()}>
          <LogOut aria-hidden />
          {t('userMenu.logout')}
        </DropdownMenuItem>
      </DropdownMenuContent>
    </DropdownMenu>
  );
}
