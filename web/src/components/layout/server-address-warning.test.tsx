import { screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';

import { useSession } from '@/stores/session';
import { mockApi, statusData } from '@/test/api-mock';
import { renderApp } from '@/test/render-app';
import { makeUser } from '@/test/users';

const root = makeUser({ id: 1, username: 'root', role: 100, status: 1, group: 'default' });
const TITLE = '服务器地址与当前访问地址不一致';

afterEach(() => useSession.getState().clearUser());

function show(role: number, serverAddress: string) {
  useSession.getState().setUser({ ...root, role });
  mockApi({ 'GET /api/status': { body: statusData({ server_address: serverAddress }) } });
  renderApp('/about');
}

describe('server address warning (P16 item 11)', () => {
  it('warns root when the configured address is not the one in use', async () => {
    show(100, 'http://localhost:3000/');
    // The tests run at http://localhost:3000 (jsdom): the same origin, no warning.
    await screen.findByRole('complementary', { name: '侧边菜单' });
    expect(screen.queryByText(TITLE)).toBeNull();
  });

  it('names both addresses and links to the system settings', async () => {
    show(100, 'https://gw.example.com');
    expect(await screen.findByText(TITLE)).toBeTruthy();
    expect(screen.getByText(/https:\/\/gw\.example\.com/).textContent).toContain(
      window.location.origin,
    );
    expect(screen.getByRole('link', { name: '前往系统设置修改' }).getAttribute('href')).toBe(
      '/setting?tab=system',
    );
  });

  it('says nothing to an admin who is not root', async () => {
    show(10, 'https://gw.example.com');
    await screen.findByRole('complementary', { name: '侧边菜单' });
    expect(screen.queryByText(TITLE)).toBeNull();
  });
});
