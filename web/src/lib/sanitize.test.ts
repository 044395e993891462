import { describe, expect, it } from 'vitest';

import { safeUrl } from './safe-url';
import { isFrameUrl, renderMarkdown, sanitizeHtml } from './sanitize';

describe('sanitizeHtml', () => {
  it('drops scripts, event handlers and script URLs, keeps ordinary markup', () => {
    const html = sanitizeHtml(
      '<b>hi</b><script>alert(1)</script><img src=x onerror="alert(2)"><a href="javascript:alert(3)">x</a>',
    );
    expect(html).toContain('<b>hi</b>');
    expect(html).not.toMatch(/script|onerror|javascript/i);
  });

  it('makes new-tab links noopener', () => {
    const html = sanitizeHtml('<a href="https://a.example" target="_blank">a</a>');
    expect(html).toContain('rel="noopener noreferrer"');
    expect(html).toContain('href="https://a.example"');
  });
});

describe('renderMarkdown', () => {
  it('renders Markdown and sanitises HTML inside it', () => {
    const html = renderMarkdown('# Title\n\n**bold** <img src=x onerror=alert(1)>');
    expect(html).toContain('<h1>Title</h1>');
    expect(html).toContain('<strong>bold</strong>');
    expect(html).not.toContain('onerror');
  });
});

describe('isFrameUrl', () => {
  it('is true only for a lone http(s) address', () => {
    expect(isFrameUrl(' https://example.com/home ')).toBe(true);
    expect(isFrameUrl('see https://example.com')).toBe(false);
    expect(isFrameUrl('javascript:alert(1)')).toBe(false);
  });
});

describe('safeUrl', () => {
  it.each([
    'javascript:alert(1)',
    ' JavaScript:alert(1)',
    'java\tscript:alert(1)',
    'data:text/html,<script>alert(1)</script>',
    'vbscript:msgbox(1)',
    'file:///etc/passwd',
    '',
  ])('refuses %j', (url) => {
    expect(safeUrl(url)).toBeNull();
  });

  it.each(['https://chat.example/?key=sk-1', 'opencat://team/join?token=sk-1', '/chat/0'])(
    'allows %j',
    (url) => {
      expect(safeUrl(url)).toBe(url);
    },
  );
});
