import { safeUrl } from '@/lib/safe-url';

/** A chat link from the status: one `{ name: url template }` object per entry (spec 02 §3). */
export interface ChatLink {
  name: string;
  template: string;
}

/** The status's chats as a flat list; null when an entry is malformed (config error). */
export function chatLinks(chats: readonly Record<string, string>[]): ChatLink[] | null {
  const links: ChatLink[] = [];
  for (const entry of chats) {
    for (const [name, template] of Object.entries(entry)) {
      if (typeof template !== 'string' || template.trim() === '') return null;
      links.push({ name, template });
    }
  }
  return links;
}

/** Fills `{address}` (URL-encoded) and `{key}` (the full `sk-` key) into a chat-link template. */
export function fillChatLink(template: string, address: string, key: string): string {
  return template.replaceAll('{address}', encodeURIComponent(address)).replaceAll('{key}', key);
}

/** A filled chat link when it is safe to open (no `javascript:`, `data:`, … URLs), else null. */
export function chatUrl(template: string, address: string, key: string): string | null {
  return safeUrl(fillChatLink(template, address, key));
}

/**
 * The chats kept locally (`chats`, mirrored from the status), for the side menu: `error` when
 * the stored text is not a valid list (spec 01 §8 'Failed to parse chat data').
 */
export function storedChats(): { links: ChatLink[]; error: boolean } {
  const raw = localStorage.getItem('chats');
  if (raw === null) return { links: [], error: false };
  try {
    const parsed: unknown = JSON.parse(raw);
    if (!Array.isArray(parsed)) return { links: [], error: true };
    const links = chatLinks(parsed as Record<string, string>[]);
    return links === null ? { links: [], error: true } : { links, error: false };
  } catch {
    return { links: [], error: true };
  }
}
