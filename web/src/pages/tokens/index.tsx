import { useMutation, useQuery } from '@tanstack/react-query';
import { BookOpen, Copy, Plus, Search } from 'lucide-react';
import { useState } from 'react';
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
import type { Token } from '@/api/tokens';
import { ConfirmDialog, useConfirm } from '@/components/common/confirm-dialog';
import { IntegrationGuide } from '@/components/common/integration-guide';
import { serverBaseUrl } from '@/components/common/integration-snippets';
import { ListBody } from '@/components/data-table/list-body';
import { Pager } from '@/components/data-table/pager';
import { useEditorDrawer } from '@/components/data-table/use-editor-drawer';
import { useListAction } from '@/components/data-table/use-list-action';
import { useListPage } from '@/components/data-table/use-list-page';
import { PageHeader } from '@/components/layout/page-header';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Input } from '@/components/ui/input';
import { chatLinks, chatUrl } from '@/lib/chat-links';
import type { ChatLink } from '@/lib/chat-links';
import { copyText } from '@/stores/manual-copy';
import { toast } from '@/stores/toasts';

import { TokenEditor } from './token-editor';
import { TokensTable } from './tokens-table';
import type { TokenAction } from './tokens-table';

import '@/components/data-table/data-table.css';
import './tokens.css';

/** /token (API 令牌): search, paging, copy, chat links, enable/disable, edit, delete. */
export function TokensPage() {
  const { t } = useTranslation('tokens');
  const status = useStatus();
  const list = useListPage({ keyword: '', token: '' });
  const editor = useEditorDrawer();
  const confirm = useConfirm();
  const [guideOpen, setGuideOpen] = useState(false);
  const tokens = useQuery(tokensQueryOptions(list.params));
  const chats = chatLinks(status.chats);
  const act = useListAction(['tokens']);
  const { setSelected } = list;
  const reveal = useMutation({ mutationFn: revealTokenKey });

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
        editor.open(token.id);
        return;
      case 'delete':
        confirm.ask({
          title: t('delete.title'),
          description: t('delete.description', { name: token.name }),
          confirmLabel: t('delete.confirm'),
          onConfirm: () =>
            act.mutate(async () => {
              await deleteToken(token.id);
              setSelected((s) => s.filter((id) => id !== token.id));
              return t('toast.done');
            }),
        });
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
    // Opened before the key arrives, so the popup is still tied to the click; it gets no
    // handle on this window (noopener), and a script or file URL is never loaded into it.
    const win = window.open('', '_blank');
    if (win) win.opener = null;
    reveal.mutate(token.id, {
      onSuccess: (key) => {
        const url = chatUrl(link.template, serverBaseUrl(status.server_address), key);
        if (url === null) {
          win?.close();
          toast.error(t('chat.configError'));
          return;
        }
        if (win) win.location.href = url;
        else window.open(url, '_blank', 'noopener,noreferrer');
      },
      onError: () => win?.close(),
    });
  };

  const copySelected = async () => {
    const rows = (tokens.data?.items ?? []).filter((tk) => list.selected.includes(tk.id));
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
            <Button onClick={() => editor.open(null)}>
              <Plus aria-hidden />
              {t('list.add')}
            </Button>
          </>
        }
      />
      <Alert tone="warning" className="tokens__banner">
        {t('list.banner')}
      </Alert>
      <form className="data-toolbar" onSubmit={list.submit} role="search">
        <Input
          aria-label={t('list.search.keyword')}
          placeholder={t('list.search.keyword')}
          value={list.draft.keyword}
          onChange={(e) => list.edit({ keyword: e.target.value })}
        />
        <Input
          aria-label={t('list.search.token')}
          placeholder={t('list.search.token')}
          value={list.draft.token}
          onChange={(e) => list.edit({ token: e.target.value })}
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
      <ListBody query={tokens} loading={t('list.loading')} failed={t('list.loadFailed')}>
        {(data) => (
          <TokensTable
            tokens={data.items}
            selected={list.selected}
            onSelect={setSelected}
            busy={act.isPending}
            onAction={onAction}
            chats={chats}
            onChat={onChat}
          />
        )}
      </ListBody>
      <Pager {...list.pager(tokens.data?.total ?? 0)} />
      <TokenEditor
        open={editor.isOpen}
        id={editor.id}
        onOpenChange={editor.onOpenChange}
        onSaved={() => {
          editor.close();
          void act.refresh();
        }}
      />
      <IntegrationGuide open={guideOpen} onOpenChange={setGuideOpen} />
      <ConfirmDialog {...confirm.dialog} />
    </>
  );
}
