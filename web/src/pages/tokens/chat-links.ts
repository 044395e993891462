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
