import { useQuery } from '@tanstack/react-query';
import { Eraser, Send, Square } from 'lucide-react';
import { useEffect, useRef, useState } from 'react';
import type { FormEvent, KeyboardEvent } from 'react';
import { useTranslation } from 'react-i18next';

import { userModelsQueryOptions } from '@/api/tokens';
import { PageHeader } from '@/components/layout/page-header';
import { Badge } from '@/components/ui/badge';
import type { BadgeProps } from '@/components/ui/badge';
import { Button } from '@/components/ui/button';
import { useSession } from '@/stores/session';

import { SettingsPanel } from './settings-panel';
import { requestBody, streamChat } from './stream';
import type { ChatMessage, MessageState, PlaygroundParams } from './stream';

import './playground.css';

/** The model picked first when the user has it (spec 02 §9). */
const DEFAULT_MODEL = 'gpt-4o-mini';

const stateTone: Record<MessageState, BadgeProps['tone']> = {
  loading: 'neutral',
  incomplete: 'yellow',
  complete: 'green',
  error: 'red',
};

let nextId = 1;

/** The chat: sends the conversation, streams the reply in place, and stops it on request. */
function useChat(params: PlaygroundParams) {
  const [messages, setMessages] = useState<ChatMessage[]>([]);
  const [running, setRunning] = useState<AbortController | null>(null);
  useEffect(() => () => running?.abort(), [running]);

  const update = (id: number, change: (m: ChatMessage) => Partial<ChatMessage>) =>
    setMessages((list) => list.map((m) => (m.id === id ? { ...m, ...change(m) } : m)));

  const send = async (text: string, stoppedNote: string) => {
    const question: ChatMessage = { id: nextId++, role: 'user', content: text };
    const reply: ChatMessage = { id: nextId++, role: 'assistant', content: '', state: 'loading' };
    const history = [...messages.filter((m) => m.state !== 'error'), question];
    setMessages([...messages, question, reply]);
    const controller = new AbortController();
    setRunning(controller);
    try {
      const end = await streamChat(
        requestBody(params, history),
        {
          onDelta: (delta) =>
            update(reply.id, (m) => ({ content: m.content + delta, state: 'incomplete' })),
        },
        controller.signal,
      );
      update(reply.id, (m) =>
        end.kind === 'done'
          ? { state: 'complete' }
          : { state: 'error', content: m.content ? `${m.content}\n${end.data}` : end.data },
      );
    } catch (error) {
      if (controller.signal.aborted) {
        update(reply.id, (m) => ({
          state: 'complete',
          content: m.content ? `${m.content} ${stoppedNote}` : stoppedNote,
        }));
      } else {
        const data = error instanceof Error ? error.message : String(error);
        update(reply.id, (m) => ({
          state: 'error',
          content: m.content ? `${m.content}\n${data}` : data,
        }));
      }
    } finally {
      setRunning(null);
    }
  };

  return {
    messages,
    running: running !== null,
    send,
    stop: () => running?.abort(),
    clear: () => setMessages([]),
  };
}

/** /playground (操练场): try the user's models through POST /pg/chat/completions. */
export function PlaygroundPage() {
  const { t } = useTranslation('playground');
  const userGroup = useSession((s) => s.user?.group) ?? '';
  const models = useQuery(userModelsQueryOptions);
  const [params, setParams] = useState<PlaygroundParams>({
    group: userGroup,
    model: '',
    temperature: null,
    maxTokens: 0,
    systemPrompt: t('systemPromptDefault'),
  });
  const [draft, setDraft] = useState('');
  const list = models.data ?? [];
  const model = params.model || (list.includes(DEFAULT_MODEL) ? DEFAULT_MODEL : (list[0] ?? ''));
  const effective = { ...params, model };
  const chat = useChat(effective);
  const end = useRef<HTMLDivElement>(null);

  // A block body: scrollIntoView returns a promise in newer browsers, which is no cleanup.
  useEffect(() => {
    if (chat.messages.length > 0) void end.current?.scrollIntoView?.({ block: 'nearest' });
  }, [chat.messages]);

  const submit = (event?: FormEvent) => {
    event?.preventDefault();
    const text = draft.trim();
    if (!text || chat.running || !model) return;
    setDraft('');
    void chat.send(text, t('stopped'));
  };
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) submit(event);
  };

  return (
    <>
      <PageHeader
        title={t('title')}
        actions={
          <Button variant="ghost" onClick={chat.clear} disabled={chat.running}>
            <Eraser aria-hidden />
            {t('clear')}
          </Button>
        }
      />
      <div className="playground">
        <SettingsPanel
          params={effective}
          onChange={(patch) => setParams((p) => ({ ...p, model, ...patch }))}
        />
        <section className="playground__chat" aria-label={t('title')}>
          <div className="playground__messages" role="log" aria-live="polite">
            {chat.messages.length === 0 ? <p className="playground__empty">{t('empty')}</p> : null}
            {chat.messages.map((m) => (
              <article
                key={m.id}
                className="playground__message"
                data-role={m.role}
                data-state={m.state}
                aria-label={m.role === 'user' ? t('you') : t('assistant')}
              >
                <header>
                  <strong>{m.role === 'user' ? t('you') : t('assistant')}</strong>
                  {m.state ? (
                    <Badge tone={stateTone[m.state]} data-message-state={m.state}>
                      {t(`state.${m.state}`)}
                    </Badge>
                  ) : null}
                </header>
                <p className="playground__text">{m.content}</p>
              </article>
            ))}
            <div ref={end} />
          </div>
          <form className="playground__input" onSubmit={submit}>
            <textarea
              className="ui-input"
              aria-label={t('input')}
              placeholder={t('inputPlaceholder')}
              rows={3}
              value={draft}
              onChange={(e) => setDraft(e.target.value)}
              onKeyDown={onKeyDown}
            />
            {chat.running ? (
              <Button type="button" variant="danger" onClick={chat.stop}>
                <Square aria-hidden />
                {t('stop')}
              </Button>
            ) : (
              <Button type="submit" disabled={!draft.trim() || !model}>
                <Send aria-hidden />
                {t('send')}
              </Button>
            )}
          </form>
        </section>
      </div>
    </>
  );
}
