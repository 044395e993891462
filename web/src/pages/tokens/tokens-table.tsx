import { ChevronDown } from 'lucide-react';
import { useTranslation } from 'react-i18next';

import { NEVER_EXPIRES, TOKEN_ENABLED } from '@/api/tokens';
import type { Token } from '@/api/tokens';
import { Money } from '@/components/common/money';
import { useSelection } from '@/components/data-table/pager';
import { Badge } from '@/components/ui/badge';
import type { BadgeProps } from '@/components/ui/badge';
import { Button } from '@/components/ui/button';
import {
  DropdownMenu,
  DropdownMenuContent,
  DropdownMenuItem,
  DropdownMenuTrigger,
} from '@/components/ui/dropdown-menu';
import { Table } from '@/components/ui/table';
import type { ChatLink } from '@/lib/chat-links';
import { formatDateTime } from '@/lib/dates';

export type TokenAction = 'copy' | 'enable' | 'disable' | 'edit' | 'delete';

const tones: Record<number, BadgeProps['tone']> = {
  1: 'green',
  2: 'red',
  3: 'orange',
  4: 'orange',
};

/** Spec 02 §4: 1 enabled (model-restricted when limited), 2 disabled, 3 expired, 4 exhausted. */
export function TokenStatus({ token }: { token: Pick<Token, 'status' | 'model_limits_enabled'> }) {
  const { t } = useTranslation('tokens');
  const { status } = token;
  const label =
    status === TOKEN_ENABLED && token.model_limits_enabled
      ? t('status.limited')
      : status === 1 || status === 2 || status === 3 || status === 4
        ? t(`status.${status}`)
        : t('status.unknown');
  return (
    <Badge
      tone={
        status === TOKEN_ENABLED && token.model_limits_enabled
          ? 'blue'
          : (tones[status] ?? 'neutral')
      }
    >
      {label}
    </Badge>
  );
}

export interface TokensTableProps {
  tokens: Token[];
  selected: number[];
  onSelect: (ids: number[]) => void;
  busy: boolean;
  onAction: (token: Token, action: TokenAction) => void;
  /** The chat links of the status (null: malformed configuration). */
  chats: ChatLink[] | null;
  onChat: (token: Token, link: ChatLink | null) => void;
}

export function TokensTable({
  tokens,
  selected,
  onSelect,
  busy,
  onAction,
  chats,
  onChat,
}: TokensTableProps) {
  const { t } = useTranslation('tokens');
  const selection = useSelection(tokens, selected, onSelect);
  return (
    <Table className="data-table">
      <thead>
        <tr>
          <th>
            <input
              type="checkbox"
              aria-label={t('action.selectAll')}
              checked={selection.all}
              onChange={(e) => selection.toggleAll(e.target.checked)}
            />
          </th>
          <th>{t('column.name')}</th>
          <th>{t('column.status')}</th>
          <th>{t('column.quota')}</th>
          <th>{t('column.created')}</th>
          <th>{t('column.expiry')}</th>
          <th>{t('column.group')}</th>
          <th>{t('column.actions')}</th>
        </tr>
      </thead>
      <tbody>
        {tokens.length === 0 ? (
          <tr>
            <td colSpan={8}>{t('list.empty')}</td>
          </tr>
        ) : null}
        {tokens.map((token) => {
          const enabled = token.status === TOKEN_ENABLED;
          return (
            <tr key={token.id} aria-label={token.name} data-state={enabled ? undefined : 'off'}>
              <td>
                <input
                  type="checkbox"
                  aria-label={t('action.select', { name: token.name })}
                  checked={selection.has(token.id)}
                  onChange={(e) => selection.toggle(token.id, e.target.checked)}
                />
              </td>
              <td>
                <div className="data-table__stack">
                  <span>{token.name}</span>
                  <small className="tokens__key">{`sk-${token.key}`}</small>
                </div>
              </td>
              <td>
                <TokenStatus token={token} />
              </td>
              <td>
                <div className="data-table__stack">
                  <Money quota={token.used_quota} label={(quota) => t('quota.used', { quota })} />
                  <small>
                    {token.unlimited_quota ? (
                      t('quota.unlimited')
                    ) : (
                      <Money
                        quota={token.remain_quota}
                        label={(quota) => t('quota.remain', { quota })}
                      />
                    )}
                  </small>
                </div>
              </td>
              <td>{formatDateTime(token.created_time)}</td>
              <td>
                {token.expired_time === NEVER_EXPIRES
                  ? t('expiry.never')
                  : formatDateTime(token.expired_time)}
              </td>
              <td>{token.group || t('group.user')}</td>
              <td>
                <div className="data-table__actions">
                  <Button
                    size="sm"
                    variant="ghost"
                    disabled={busy}
                    onClick={() => onAction(token, 'copy')}
                  >
                    {t('action.copy')}
                  </Button>
                  {chats !== null && chats.length > 0 ? (
                    <DropdownMenu>
                      <DropdownMenuTrigger asChild>
                        <Button size="sm" variant="ghost" disabled={busy}>
                          {t('action.chat')}
                          <ChevronDown aria-hidden />
                        </Button>
                      </DropdownMenuTrigger>
                      <DropdownMenuContent>
                        {chats.map((link) => (
                          <DropdownMenuItem key={link.name} onSelect={() => onChat(token, link)}>
                            {link.name}
                          </DropdownMenuItem>
                        ))}
                      </DropdownMenuContent>
                    </DropdownMenu>
                  ) : (
                    <Button
                      size="sm"
                      variant="ghost"
                      disabled={busy}
                      onClick={() => onChat(token, null)}
                    >
                      {t('action.chat')}
                    </Button>
                  )}
                  {enabled ? (
                    <Button
                      size="sm"
                      variant="ghost"
                      disabled={busy}
                      onClick={() => onAction(token, 'disable')}
                    >
                      {t('action.disable')}
                    </Button>
                  ) : (
                    <Button
                      size="sm"
                      variant="ghost"
                      disabled={busy}
                      onClick={() => onAction(token, 'enable')}
                    >
                      {t('action.enable')}
                    </Button>
                  )}
                  <Button size="sm" variant="ghost" onClick={() => onAction(token, 'edit')}>
                    {t('action.edit')}
                  </Button>
                  <Button
                    size="sm"
                    variant="danger"
                    disabled={busy}
                    onClick={() => onAction(token, 'delete')}
                  >
                    {t('action.delete')}
                  </Button>
                </div>
              </td>
            </tr>
          );
        })}
      </tbody>
    </Table>
  );
}
