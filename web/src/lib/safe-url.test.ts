import { describe, expect, it } from 'vitest';

import { chatUrl } from '@/lib/chat-links';
import { safeUrl } from '@/lib/safe-url';

describe('safeUrl', () => {
  it('refuses script and local schemes however they are written', () => {
    for (const url of [
      'javascript:alert(1)',
      '  JavaScript:alert(1)',
      'java\tscript:alert(1)',
      '\u0001javascript:alert(1)',
      'data:text/html,<script>alert(1)</script>',
      'VBScript:msgbox',
      'file:///etc/passwd',
      '',
    ]) {
      expect(safeUrl(url), url).toBeNull();
    }
  });

  it('keeps web addresses and app deep links', () => {
    expect(safeUrl(' https://chat.example/ ')).toBe('https://chat.example/');
    expect(safeUrl('opencat://team/join?domain=x')).toBe('opencat://team/join?domain=x');
  });
});

describe('chatUrl', () => {
  it('fills the key and the encoded address, and refuses a script template', () => {
    expect(chatUrl('https://chat.example/?key={key}&s={address}', 'http://gw:3000', 'sk-abc')).toBe(
      'https://chat.example/?key=sk-abc&s=http%3A%2F%2Fgw%3A3000',
    );
    expect(chatUrl('javascript:alert("{key}")', 'http://gw', 'sk-abc')).toBeNull();
  });
});
