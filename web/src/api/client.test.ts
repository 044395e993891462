import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod/mini';

import { i18n } from '@/i18n';
import { useSession } from '@/stores/session';
import { mockApi } from '@/test/api-mock';
import { makeUser } from '@/test/users';

import { apiRequest } from './client';
import { ApiError, describeApiError, localizedMessage } from './errors';

const user = makeUser({ id: 7, username: 'ada', display_name: 'Ada' });

afterEach(() => {
  useSession.getState().clearUser();
  window.history.replaceState(null, '', '/');
});

describe('apiRequest', () => {
  it('sends the stored user id and no-store on every call', async () => {
    const calls = mockApi({ 'GET /api/thing': { body: { success: true, message: '', data: 1 } } });
    await apiRequest('/api/thing');
    useSession.getState().setUser(user);
    await apiRequest('/api/thing');
    expect(calls.map((c) => c.headers['new-api-user'])).toEqual(['-1', '7']);
    expect(calls.every((c) => c.headers['cache-control'] === 'no-store')).toBe(true);
  });

  it('sends bodies as JSON and query parameters without undefined values', async () => {
    const calls = mockApi({ 'POST /api/thing': { body: { success: true, message: '' } } });
    await apiRequest('/api/thing', {
      method: 'POST',
      body: { a: 1 },
      query: { p: 2, keyword: undefined },
    });
    expect(calls[0]).toMatchObject({ url: '/api/thing?p=2', body: { a: 1 } });
    expect(calls[0]?.headers['content-type']).toBe('application/json');
  });

  it('unwraps and validates data', async () => {
    mockApi({ 'GET /api/n': { body: { success: true, message: '', data: { n: 3 } } } });
    await expect(apiRequest('/api/n', { schema: z.object({ n: z.number() }) })).resolves.toEqual({
      n: 3,
    });
  });

  it('turns success:false into an app error carrying the server message', async () => {
    mockApi({ 'GET /api/x': { body: { success: false, message: '用户名或密码错误' } } });
    const error = await apiRequest('/api/x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ kind: 'app', message: '用户名或密码错误' });
    expect(describeApiError(error).text).toBe('用户名或密码错误');
  });

  it('reports data of the wrong shape as invalid', async () => {
    mockApi({ 'GET /api/n': { body: { success: true, message: '', data: { n: 'three' } } } });
    await expect(
      apiRequest('/api/n', { schema: z.object({ n: z.number() }) }),
    ).rejects.toMatchObject({ kind: 'invalid' });
  });

  it('reports a failed connection as a network error', async () => {
    mockApi({ 'GET /api/x': { networkError: true } });
    await expect(apiRequest('/api/x')).rejects.toMatchObject({ kind: 'network' });
  });

  it('on 401 forgets the user and goes to /login?expired=true', async () => {
    const assign = vi.fn();
    vi.spyOn(window, 'location', 'get').mockReturnValue({
      ...window.location,
      pathname: '/token',
      assign,
    });
    useSession.getState().setUser(user);
    mockApi({ 'GET /api/x': { status: 401, body: { success: false, message: 'expired' } } });
    const error = await apiRequest('/api/x').catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'http', status: 401, handled: true });
    expect(assign).toHaveBeenCalledWith('/login?expired=true');
    expect(useSession.getState().user).toBeNull();
  });
});

describe('describeApiError (spec 01 §8)', () => {
  const http = (status: number, message = 'boom') => new ApiError('http', message, status);

  it.each([
    [429, 'error', '错误：请求次数过多，请稍后再试！'],
    [500, 'error', '错误：服务器内部错误，请联系管理员！'],
    [405, 'info', '本站仅作演示之用，无服务端！'],
    [403, 'error', '错误：boom'],
  ])('HTTP %i → %s %s', (status, tone, text) => {
    expect(describeApiError(http(status))).toEqual({ tone, text });
  });
});

describe('error codes', () => {
  it('carries the server code and shows the text keyed by it', async () => {
    mockApi({
      'POST /api/user/login': {
        status: 400,
        body: { success: false, message: 'wrong username or password', code: 'bad_credentials' },
      },
    });
    const error = await apiRequest('/api/user/login', { method: 'POST' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'http', status: 400, code: 'bad_credentials' });
    expect(describeApiError(error).text).toBe('用户名或密码错误，或用户已被封禁');
  });

  it('quotes the server detail where the code alone is vague', () => {
    const error = new ApiError('http', 'only the super admin can promote', 403, 'forbidden');
    expect(describeApiError(error).text).toBe('权限不足：only the super admin can promote');
  });

  it("says a specific code in the reader's language, never the English message", async () => {
    mockApi({
      'POST /api/user/manage': {
        status: 403,
        body: {
          success: false,
          message: 'you cannot manage a user whose level is equal to or higher than yours',
          code: 'forbidden',
          detail: 'cannot_manage_peer',
        },
      },
    });
    const error = await apiRequest('/api/user/manage', { method: 'POST' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'forbidden', detail: 'cannot_manage_peer' });
    expect(describeApiError(error).text).toBe('无权管理同级或更高级用户');
    await i18n.changeLanguage('en');
    try {
      expect(describeApiError(error).text).toBe(
        'You cannot manage a user whose level is equal to or higher than yours',
      );
    } finally {
      await i18n.changeLanguage('zh');
    }
  });

  it('fills a specific text with the arguments the server sent', async () => {
    mockApi({
      'PUT /api/option/': {
        body: {
          success: false,
          message: 'Logo may not use the data: scheme',
          code: 'invalid_request',
          detail: 'option_refused_scheme',
          args: ['Logo', 'data:'],
        },
      },
    });
    const error = await apiRequest('/api/option/', { method: 'PUT' }).catch((e: unknown) => e);
    expect(describeApiError(error).text).toBe('Logo 不能使用 data: 协议');
    expect(localizedMessage(error)).toBe('Logo 不能使用 data: 协议');
  });

  it('falls back to the status handling for an unknown code', () => {
    const error = new ApiError('http', 'teapot', 418, 'brewing');
    expect(describeApiError(error).text).toBe('错误：teapot');
  });
});
