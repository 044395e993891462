import { createParser } from 'eventsource-parser';

import { GUEST_USER_ID } from '@/api/client';
import { useSession } from '@/stores/session';

/** A reply's life (spec 02 §4): loading, then incomplete while streaming, then complete or error. */
export type MessageState = 'loading' | 'incomplete' | 'complete' | 'error';

export interface ChatMessage {
  id: number;
  role: 'user' | 'assistant';
  content: string;
  /** Replies only. */
  state?: MessageState;
}

export interface PlaygroundParams {
  group: string;
  model: string;
  /** Null until the user moves the slider: then the model's default applies (not sent). */
  temperature: number | null;
  /** 0 = no limit (not sent). */
  maxTokens: number;
  systemPrompt: string;
}

/** The body of POST /pg/chat/completions (spec 02 §7). */
export function requestBody(params: PlaygroundParams, history: ChatMessage[]) {
  const messages = [
    ...(params.systemPrompt.trim() ? [{ role: 'system', content: params.systemPrompt }] : []),
    ...history.map(({ role, content }) => ({ role, content })),
  ];
  return {
    messages,
    stream: true,
    model: params.model,
    group: params.group,
    ...(params.maxTokens > 0 ? { max_tokens: Math.trunc(params.maxTokens) } : {}),
    ...(params.temperature !== null ? { temperature: params.temperature } : {}),
  };
}

export interface StreamHandlers {
  /** Text to append to the reply. */
  onDelta: (text: string) => void;
}

/** How a stream ended: `done` at [DONE] or a close, `error` with what to append to the reply. */
export type StreamEnd = { kind: 'done' } | { kind: 'error'; data: string };

/** The text of one chunk, or an error the upstream put in the stream. */
function readChunk(data: string): { text: string } | { error: string } {
  let chunk: unknown;
  try {
    chunk = JSON.parse(data);
  } catch {
    return { error: data };
  }
  if (typeof chunk !== 'object' || chunk === null) return { text: '' };
  if ('error' in chunk) return { error: data };
  const choices = (chunk as { choices?: { delta?: { content?: unknown } }[] }).choices;
  const content = choices?.[0]?.delta?.content;
  return { text: typeof content === 'string' ? content : '' };
}

/**
 * Sends the chat and reads its server-sent events until `[DONE]`, the end of the stream, an
 * error, or `signal` aborting (which rejects with the abort). A failed answer's body is the
 * error's data.
 */
export async function streamChat(
  body: ReturnType<typeof requestBody>,
  { onDelta }: StreamHandlers,
  signal: AbortSignal,
): Promise<StreamEnd> {
  const response = await fetch('/pg/chat/completions', {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'New-Api-User': String(useSession.getState().user?.id ?? GUEST_USER_ID),
      'Cache-Control': 'no-store',
    },
    body: JSON.stringify(body),
    credentials: 'same-origin',
    signal,
  });
  if (!response.ok || !response.body) {
    return { kind: 'error', data: (await response.text()) || response.statusText };
  }
  let end: StreamEnd | null = null;
  const parser = createParser({
    onEvent: (event) => {
      if (end) return;
      if (event.data === '[DONE]') {
        end = { kind: 'done' };
        return;
      }
      const chunk = event.event === 'error' ? { error: event.data } : readChunk(event.data);
      if ('error' in chunk) end = { kind: 'error', data: chunk.error };
      else if (chunk.text) onDelta(chunk.text);
    },
  });
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  try {
    while (!end) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(value);
    }
  } finally {
    // Ended by [DONE] or an error event: stop reading what the server may still send.
    if (end) await reader.cancel().catch(() => undefined);
    else reader.releaseLock();
  }
  // A stream that closes without [DONE] still counts as complete (spec 02 §4).
  return end ?? { kind: 'done' };
}
