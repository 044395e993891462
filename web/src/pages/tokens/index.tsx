import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { BookOpen, Copy, Plus, Search } from 'lucide-react';
import { useEffect, useRef, useState } from 'react';
import type { FormEvent } from 'react';
import { useTranslation } from 'react-i18next';

import { useStatus } from '@/api/status';
import {
  deleteToken,
  revealTokenKey,
  setTokenStatus,
  TOKEN_DISABLED,
  TOKEN_ENABLED,
  tokensQueryOptions,
} from '@/api/tokens';
import type { Token, TokenListQuery } from '@/api/tokens';
import { ConfirmDialog } from '@/components/common/confirm-dialog';
import { IntegrationGuide } from '@/components/common/integration-guide';
import { serverBaseUrl } from '@/components/common/integration-snippets';
import { Pager } from '@/components/data-table/pager';
import { PageHeader } from '@/components/layout/page-header';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Input } from '@/components/ui/input';
import { Spinner } from '@/components/ui/spinner';
import { copyText } from '@/stores/manual-copy';
import { pageSizes, usePreferences } from '@/stores/preferences';
import type { PageSize } from '@/stores/preferences';
import { toast } from '@/stores/toasts';

import { chatLinks, fillChatLink } from './chat-links';
import type { ChatLink } from './chat-links';
import { TokenEditor } from './token-editor';
import { TokensTable } from './tokens-table';
import type { TokenAction } from './tokens-table';

import '@/components/data-table/data-table.css';
import './tokens.css';

/** The editor's id is cleared this long after it closes, so the closing drawer keeps its form. */
const CLEAR_EDITOR_MS = 500;

/** /token (API 令牌): search, paging, copy, chat links, enable/disable, edit, delete. */
export function TokensPage() {
  const { t } = useTranslation('tokens');
  const status = useStatus();
  const queryClient = useQueryClient();
  const pageSize = usePreferences((s) => s.pageSize);
  const setPageSize = usePreferences((s) => s.setPageSize);
  const [filter, setFilter] = useState({ keyword: '', token: '' });
  const [draft, setDraft] = useState(filter);
  const [page, setPage] = useState(1);
  const [selected, setSelected] = useState<number[]>([]);
  const [editor, setEditor] = useState<{ open: boolean; id: number | null }>({
    open: false,
    id: null,
  });
  const [guideOpen, setGuideOpen] = useState(false);
  const [deleting, setDeleting] = useState<Token | null>(null);
  const clearTimer = useRef<ReturnType<typeof setTimeout>>(undefined);
  useEffect(() => () => clearTimeout(clearTimer.current), []);

  const query: TokenListQuery = { ...filter, page, pageSize };
  const tokens = useQuery(tokensQueryOptions(query));
  const chats = chatLinks(status.chats);
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['tokens'] });

  const act = useMutation({
    mutationFn: async (run: () => Promise<string>) => run(),
    onSuccess: (text) => {
      if (text) toast.success(text);
      void refresh();
    },
  });
  const reveal = useMutation({ mutationFn: revealTokenKey });

  const openEditor = (id: number | null) => {
    clearTimeout(clearTimer.current);
    setEditor({ open: true, id });
  };
  const closeEditor = () => {
    setEditor((e) => ({ ...e, open: false }));
    clearTimer.current = setTimeout(
      () => setEditor((e) => (e.open ? e : { ...e, id: null })),
      CLEAR_EDITOR_MS,
    );
  };

  const onAction = (token: Token, action: TokenAction) => {
    switch (action) {
      case 'copy':
        reveal.mutate(token.id, { onSuccess: (key) => void copyText(key, t('toast.copied')) });
        return;
      case 'enable':
      case 'disable':
        act.mutate(async () => {
          await setTokenStatus(token.id, action === 'enable' ? TOKEN_ENABLED : TOKEN_DISABLED);
          return t('toast.done');
        });
        return;
      case 'edit':
        openEditor(token.id);
        return;
      case 'delete':
        setDeleting(token);
        return;
    }
  };

  const onChat = (token: Token, link: ChatLink | null) => {
    if (chats === null) {
      toast.error(t('chat.configError'));
      return;
    }
    if (link === null) {
      toast.error(t('chat.none'));
      return;
    }
    // Opened before the key arrives, so the popup is still tied to the click.
    const win = window.open('', '_blank');
    reveal.mutate(token.id, {
      onSuccess: (key) => {
        const url = fillChatLink(link.template, serverBaseUrl(status.server_address), key);
        if (win) win.location.href = url;
        else window.open(url, '_blank');
      },
      onError: () => win?.close(),
    });
  };

  const copySelected = async () => {
    const rows = (tokens.data?.items ?? []).filter((tk) => selected.includes(tk.id));
    if (rows.length === 0) {
      toast.error(t('toast.selectOne'));
      return;
    }
    try {
      const keys = await Promise.all(rows.map((tk) => revealTokenKey(tk.id)));
      const text = rows.map((tk, i) => `${tk.name}    ${keys[i]}`).join('\n');
      await copyText(text, t('toast.copied'));
    } catch {
      // The query client's generic handling has shown why.
    }
  };

  const search = (event: FormEvent) => {
    event.preventDefault();
    setFilter(draft);
    setPage(1);
    setSelected([]);
  };

  return (
    <>
      <PageHeader
        title={t('list.title')}
        actions={
          <>
            <Button variant="secondary" onClick={() => setGuideOpen(true)}>
              <BookOpen aria-hidden />
              {t('list.guide')}
            </Button>
            <Button onClick={() => openEditor(null)}>
              <Plus aria-hidden />
              {t('list.add')}
            </Button>
          </>
        }
      />
      <Alert tone="warning" className="tokens__banner">
        {t('list.banner')}
      </Alert>
      <form className="data-toolbar" onSubmit={search} role="search">
        <Input
          aria-label={t('list.search.keyword')}
          placeholder={t('list.search.keyword')}
          value={draft.keyword}
          onChange={(e) => setDraft({ ...draft, keyword: e.target.value })}
        />
        <Input
          aria-label={t('list.search.token')}
          placeholder={t('list.search.token')}
          value={draft.token}
          onChange={(e) => setDraft({ ...draft, token: e.target.value })}
        />
        <Button type="submit" variant="secondary">
          <Search aria-hidden />
          {t('list.search.submit')}
        </Button>
        <Button variant="secondary" className="data-toolbar__spacer" onClick={copySelected}>
          <Copy aria-hidden />
          {t('list.copySelected')}
        </Button>
      </form>
      {tokens.isError && !tokens.data ? (
        <Alert tone="danger">{t('list.loadFailed')}</Alert>
      ) : !tokens.data ? (
        <Spinner label={t('list.loading')} />
      ) : (
        <TokensTable
          tokens={tokens.data.items}
          selected={selected}
          onSelect={setSelected}
          busy={act.isPending}
          onAction={onAction}
          chats={chats}
          onChat={onChat}
        />
      )}
      <Pager
        page={page}
        pageSize={pageSize}
        total={tokens.data?.total ?? 0}
        sizes={pageSizes}
        onPage={(p) => {
          setPage(p);
          setSelected([]);
        }}
        onPageSize={(size) => {
          setPageSize(size as PageSize);
          setPage(1);
        }}
      />
      <TokenEditor
        open={editor.open}
        id={editor.id}
        onOpenChange={(open) => (open ? undefined : closeEditor())}
        onSaved={() => {
          closeEditor();
          void refresh();
        }}
      />
      <IntegrationGuide open={guideOpen} onOpenChange={setGuideOpen} />
      <ConfirmDialog
        open={deleting !== null}
        title={t('delete.title')}
        description={t('delete.description', { name: deleting?.name ?? '' })}
        confirmLabel={t('delete.confirm')}
        onCancel={() => setDeleting(null)}
        onConfirm={() => {
          const token = deleting;
          setDeleting(null);
          if (!token) return;
          act.mutate(async () => {
            await deleteToken(token.id);
            setSelected((s) => s.filter((id) => id !== token.id));
            return t('toast.done');
          });
        }}
      />
    </>
  );
}
