import DOMPurify from 'dompurify';
import { marked } from 'marked';

import { safeUrl } from './safe-url';

// Links the admin wrote open in a new tab without access to this window, and a link to a
// refused scheme loses its href.
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (!(node instanceof Element)) return;
  for (const attribute of ['href', 'src', 'action', 'formaction', 'xlink:href']) {
    const value = node.getAttribute(attribute);
    if (value !== null && safeUrl(value) === null) node.removeAttribute(attribute);
  }
  if (node.tagName === 'A' && node.hasAttribute('target')) {
    node.setAttribute('rel', 'noopener noreferrer');
  }
});

/**
 * HTML the administrator wrote (footer, notice, home, about), made inert: no scripts, event
 * handlers, frames, forms or script URLs survive. Ordinary markup, links and images stay.
 */
export function sanitizeHtml(html: string): string {
  return DOMPurify.sanitize(html, {
    FORBID_TAGS: ['style', 'form', 'iframe', 'object', 'embed'],
    ADD_ATTR: ['target'],
  });
}

/** Markdown (which may hold HTML) rendered and then sanitised. */
export function renderMarkdown(source: string): string {
  const html = marked.parse(source, { async: false, gfm: true, breaks: true });
  return sanitizeHtml(html);
}

/** Whether home or about content is a page address to show in a frame rather than text. */
export function isFrameUrl(content: string): boolean {
  const text = content.trim();
  return /^https?:\/\/\S+$/i.test(text);
}
