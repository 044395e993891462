/** URL schemes that run code or read local files when opened: never followed (issue 20 item 1). */
const REFUSED_SCHEMES = ['javascript:', 'data:', 'vbscript:', 'file:'];

/**
 * The URL when it is safe to open, else null. Deep links to apps (`opencat://`, `ama://`) stay
 * allowed; `javascript:`, `data:`, `vbscript:` and `file:` are refused however they are written
 * (upper case, leading blanks, control characters or tabs inside the scheme, entity-free).
 */
export function safeUrl(url: string): string | null {
  const trimmed = url.trim();
  if (trimmed === '') return null;
  // Browsers drop ASCII tabs and newlines anywhere in a URL and control characters at its start.
  // eslint-disable-next-line no-control-regex
  const folded = trimmed.replace(/[\u0000-\u001f\u007f\s]/g, '').toLowerCase();
  if (REFUSED_SCHEMES.some((scheme) => folded.startsWith(scheme))) return null;
  return trimmed;
}

/** Opens a URL in a new tab without giving it this window (`noopener`); false when refused. */
export function openSafely(url: string): boolean {
  const safe = safeUrl(url);
  if (safe === null) return false;
  window.open(safe, '_blank', 'noopener,noreferrer');
  return true;
}
