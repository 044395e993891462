import { useQuery } from '@tanstack/react-query';
import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { useNavigate, useParams } from 'react-router';

import { useStatus } from '@/api/status';
import { fetchTokens, revealTokenKey, TOKEN_ENABLED } from '@/api/tokens';
import { serverBaseUrl } from '@/components/common/integration-snippets';
import { ContentFrame } from '@/components/common/rich-content';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Spinner } from '@/components/ui/spinner';
import { chatLinks, chatUrl } from '@/lib/chat-links';

import './content.css';

/** With no enabled token the page says so and goes to /token after this long (spec 02 §5). */
export const NO_TOKEN_REDIRECT_MS = 1_500;

type ChatTarget =
  { kind: 'config' } | { kind: 'none' } | { kind: 'noToken' } | { kind: 'url'; url: string };

/**
 * Fills chat link `index` with the user's first enabled token (the first 100 tokens are read,
 * spec 02 §7) and the server address.
 */
function useChatTarget(index: number) {
  const { chats, server_address: address } = useStatus();
  return useQuery({
    queryKey: ['chat-link', index, chats, address],
    queryFn: async (): Promise<ChatTarget> => {
      const links = chatLinks(chats);
      if (links === null) return { kind: 'config' };
      const link = links[index];
      if (!link) return { kind: links.length === 0 ? 'none' : 'config' };
      const page = await fetchTokens({ keyword: '', token: '', page: 0, pageSize: 100 });
      const token = page.items.find((tk) => tk.status === TOKEN_ENABLED);
      if (!token) return { kind: 'noToken' };
      const key = await revealTokenKey(token.id);
      const url = chatUrl(link.template, serverBaseUrl(address), key);
      return url === null ? { kind: 'config' } : { kind: 'url', url };
    },
    staleTime: Infinity,
    gcTime: 0,
  });
}

/** The messages of a chat link that cannot open; no enabled token goes to /token after 1.5 s. */
function ChatProblem({ kind }: { kind: 'config' | 'none' | 'noToken' }) {
  const { t } = useTranslation('content');
  const navigate = useNavigate();
  useEffect(() => {
    if (kind !== 'noToken') return undefined;
    const timer = setTimeout(() => void navigate('/token'), NO_TOKEN_REDIRECT_MS);
    return () => clearTimeout(timer);
  }, [kind, navigate]);
  const text =
    kind === 'config'
      ? t('chat.configError')
      : kind === 'none'
        ? t('chat.none')
        : t('chat.noToken');
  return (
    <div className="chat-page__message">
      <Alert tone={kind === 'noToken' ? 'warning' : 'danger'}>{text}</Alert>
    </div>
  );
}

/** An app deep link (opencat://…) cannot sit in a frame: it is offered as a link instead. */
function isWebUrl(url: string): boolean {
  return /^https?:\/\//i.test(url) || url.startsWith('/');
}

/** /chat/{id?}: chat link `id` (default 0) filled with the user's key, shown in a frame. */
export function ChatPage() {
  const { t } = useTranslation('content');
  const index = Number(useParams().id ?? 0);
  const target = useChatTarget(Number.isInteger(index) && index >= 0 ? index : -1);
  if (!target.data) {
    return target.isError ? (
      <ChatProblem kind="config" />
    ) : (
      <div className="chat-page__message">
        <Spinner label={t('chat.loading')} />
      </div>
    );
  }
  const data = target.data;
  if (data.kind !== 'url') return <ChatProblem kind={data.kind} />;
  if (!isWebUrl(data.url)) {
    return (
      <div className="chat-page__message">
        <p>{t('chat.openHint')}</p>
        <Button asChild>
          <a href={data.url} rel="noopener noreferrer">
            {t('chat.open')}
          </a>
        </Button>
      </div>
    );
  }
  return <ContentFrame src={data.url} title={t('chat.frameTitle')} />;
}

/** /chat2link: goes straight to the first chat link, filled with the user's key. */
export function ChatToLinkPage() {
  const { t } = useTranslation('content');
  const target = useChatTarget(0);
  const url = target.data?.kind === 'url' ? target.data.url : null;
  useEffect(() => {
    if (url !== null) window.location.replace(url);
  }, [url]);
  if (target.data && target.data.kind !== 'url') return <ChatProblem kind={target.data.kind} />;
  if (target.isError) return <ChatProblem kind="config" />;
  return (
    <div className="chat-page__message">
      <Spinner label={url ? t('chat.redirecting') : t('chat.loading')} />
    </div>
  );
}
