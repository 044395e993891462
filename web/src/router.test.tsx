import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';

import { useSession } from '@/stores/session';
import { mockApi, statusData } from '@/test/api-mock';
import { renderApp } from '@/test/render-app';
import { makeUser } from '@/test/users';

const admin = makeUser({
  id: 1,
  username: 'root',
  display_name: 'Root',
  role: 100,
  status: 1,
  group: 'default',
});
const setupInfo = {
  success: true,
  message: '',
  data: { status: false, root_init: false, database_type: 'redb' },
};

afterEach(() => useSession.getState().clearUser());

describe('route guards (spec 01 §2)', () => {
  it('before setup, any path redirects to /setup', async () => {
    mockApi({
      'GET /api/status': { body: statusData({ setup: false, root_init: false }) },
      'GET /api/setup': { body: setupInfo },
    });
    const { router } = renderApp('/token');
    expect(await screen.findByRole('heading', { name: '系统初始化' })).toBeTruthy();
    expect(router.state.location.pathname).toBe('/setup');
  });

  it('after setup, /setup redirects home', async () => {
    mockApi({ 'GET /api/status': { body: statusData() } });
    const { router } = renderApp('/setup');
    await waitFor(() => expect(router.state.location.pathname).toBe('/'));
  });

  it('console pages send a guest to /login', async () => {
    mockApi({ 'GET /api/status': { body: statusData() } });
    const { router } = renderApp('/channel/edit/3');
    expect(await screen.findByRole('button', { name: '登录' })).toBeTruthy();
    expect(router.state.location.pathname).toBe('/login');
  });

  it('console pages render for a stored user, with the side menu', async () => {
    useSession.getState().setUser(admin);
    mockApi({ 'GET /api/status': { body: statusData() } });
    renderApp('/channel/edit/3');
    expect(await screen.findByRole('heading', { name: '编辑渠道' })).toBeTruthy();
    // The editor is a modal drawer over the list: the shell behind it is hidden from the a11y tree.
    const menu = screen.getByRole('complementary', { name: '侧边菜单', hidden: true });
    expect(within(menu).getByRole('link', { name: '渠道管理', hidden: true })).toBeTruthy();
  });

  it('public pages need no user', async () => {
    mockApi({ 'GET /api/status': { body: statusData() } });
    const { router } = renderApp('/pricing');
    expect(await screen.findByRole('heading', { name: '模型价格' })).toBeTruthy();
    expect(router.state.location.pathname).toBe('/pricing');
  });

  it('home has no side menu', async () => {
    mockApi({ 'GET /api/status': { body: statusData() } });
    renderApp('/');
    expect(await screen.findByRole('heading', { level: 1 })).toBeTruthy();
    expect(screen.queryByRole('complementary', { name: '侧边菜单' })).toBeNull();
  });

  it('unknown paths show the not-found page', async () => {
    mockApi({ 'GET /api/status': { body: statusData() } });
    renderApp('/no/such/page');
    expect(await screen.findByRole('heading', { name: '页面不存在' })).toBeTruthy();
    expect(screen.getByText('请检查你的浏览器地址是否正确')).toBeTruthy();
  });
});

describe('shell', () => {
  it('applies the system name and shows the usage-mode badge', async () => {
    mockApi({
      'GET /api/status': {
        body: statusData({ system_name: 'Acme AI', self_use_mode_enabled: true }),
      },
    });
    renderApp('/about');
    expect(await screen.findByText('Acme AI')).toBeTruthy();
    expect(screen.getByText('自用模式')).toBeTruthy();
    await waitFor(() => expect(document.title).toBe('Acme AI'));
    expect(screen.queryByRole('link', { name: '注册' }), 'no sign-up in self-use mode').toBeNull();
  });

  it('shows the docs link only when the status has one', async () => {
    mockApi({ 'GET /api/status': { body: statusData({ docs_link: 'https://docs.example' }) } });
    renderApp('/about');
    const docs = await screen.findByRole('link', { name: '文档' });
    expect(docs.getAttribute('href')).toBe('/docs');
  });

  it('/docs shows the status docs link in a frame and offers a new tab', async () => {
    mockApi({ 'GET /api/status': { body: statusData({ docs_link: 'https://docs.example' }) } });
    renderApp('/docs');
    expect((await screen.findByTitle('文档')).getAttribute('src')).toBe('https://docs.example');
    const open = screen.getByRole('link', { name: '在新标签页打开文档' });
    expect(open.getAttribute('rel')).toContain('noopener');
  });

  it('the home page renders the configured Markdown, sanitised', async () => {
    mockApi({
      'GET /api/status': { body: statusData() },
      'GET /api/home_page_content': {
        body: { success: true, message: '', data: '# Welcome\n\n<img src=x onerror="alert(1)">' },
      },
      'GET /api/notice': { body: { success: true, message: '', data: '' } },
    });
    const { container } = renderApp('/');
    expect(await screen.findByRole('heading', { name: 'Welcome' })).toBeTruthy();
    expect(container.querySelector('[onerror]')).toBeNull();
  });

  it('reports an unreachable server', async () => {
    mockApi({ 'GET /api/status': { networkError: true } });
    renderApp('/');
    expect(await screen.findByText('无法连接到服务器', {}, { timeout: 4000 })).toBeTruthy();
  });

  it('reports a status that failed to load', async () => {
    mockApi({ 'GET /api/status': { status: 500, body: { success: false, message: 'down' } } });
    renderApp('/');
    expect(await screen.findByText('加载系统状态失败')).toBeTruthy();
  });
});

describe('guests (issue 20 item 7)', () => {
  it('a guest on /login sees no console menu and no console link', async () => {
    mockApi({ 'GET /api/status': { body: statusData() } });
    renderApp('/login');
    expect(await screen.findByRole('button', { name: '登录' })).toBeTruthy();
    expect(screen.queryByRole('complementary', { name: '侧边菜单' })).toBeNull();
    const nav = screen.getByRole('navigation', { name: '主导航' });
    const hrefs = within(nav)
      .getAllByRole('link')
      .map((link) => link.getAttribute('href'));
    expect(hrefs).toEqual(['/', '/pricing', '/about']);
  });

  it('a signed-in user on a public page keeps the side menu and the console link', async () => {
    useSession.getState().setUser(admin);
    mockApi({ 'GET /api/status': { body: statusData() } });
    renderApp('/pricing');
    expect(await screen.findByRole('complementary', { name: '侧边菜单' })).toBeTruthy();
    expect(screen.getByRole('link', { name: '控制台' }).getAttribute('href')).toBe('/detail');
  });

  it('/setup before setup offers no links that lead back to it', async () => {
    mockApi({
      'GET /api/status': { body: statusData({ setup: false, root_init: false }) },
      'GET /api/setup': { body: setupInfo },
    });
    renderApp('/setup');
    expect(await screen.findByRole('heading', { name: '系统初始化' })).toBeTruthy();
    expect(screen.queryByRole('navigation', { name: '主导航' })).toBeNull();
    expect(screen.queryByRole('link', { name: '登录' })).toBeNull();
    expect(screen.queryByRole('link', { name: '注册' })).toBeNull();
    expect(screen.queryByRole('complementary', { name: '侧边菜单' })).toBeNull();
  });
});

describe('side menu', () => {
  const signedIn = () => useSession.getState().setUser({ ...admin, role: 1 });

  it('starts collapsed when the administrator says so, and remembers the user choice', async () => {
    signedIn();
    mockApi({ 'GET /api/status': { body: statusData({ default_collapse_sidebar: true }) } });
    renderApp('/token');
    const toggle = await screen.findByRole('button', { name: '展开侧边栏' });
    await userEvent.click(toggle);
    expect(await screen.findByRole('button', { name: '收起侧边栏' })).toBeTruthy();
    expect(localStorage.getItem('default_collapse_sidebar')).toBe('false');
  });

  it('shows optional entries only when the status enables them, and no admin group for users', async () => {
    signedIn();
    mockApi({
      'GET /api/status': {
        body: statusData({ enable_data_export: false, enable_drawing: true, enable_task: false }),
      },
    });
    renderApp('/token');
    const menu = await screen.findByRole('complementary', { name: '侧边菜单' });
    const links = within(menu)
      .getAllByRole('link')
      .map((link) => link.getAttribute('href'));
    expect(links).toEqual(['/playground', '/token', '/log', '/midjourney', '/topup', '/personal']);
  });
});
