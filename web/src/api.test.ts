import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { api, ApiError, hasKey, onSignOut, setKey, setToken } from './api';

const TOKEN_ENDPOINT = 'https://id.example.com/token';
const grant = (refresh_token: string, audience?: string) => ({ token_endpoint: TOKEN_ENDPOINT, client_id: 'kg-web', refresh_token, audience });

interface Sent {
  url: string;
  authorization?: string;
  form?: Record<string, string>;
}

/** A fake provider and API: the token endpoint rotates refresh tokens (one use each); the
 * API accepts only the access tokens in `valid`. */
function fakeNetwork() {
  const sent: Sent[] = [];
  const valid = new Set<string>();
  const refreshTokens = new Set<string>(['rt-1']);
  let issued = 0;
  let providerDown = false;
  let refuseAll = false;
  const fetch = vi.fn(async (url: string, init: RequestInit = {}) => {
    const h = (init.headers ?? {}) as Record<string, string>;
    if (url === TOKEN_ENDPOINT) {
      const form = Object.fromEntries(new URLSearchParams(String(init.body)));
      sent.push({ url, authorization: h.authorization, form });
      if (providerDown) throw new TypeError('Failed to fetch');
      if (form.grant_type !== 'refresh_token' || !refreshTokens.delete(form.refresh_token)) {
        return new Response(JSON.stringify({ error: 'invalid_grant' }), { status: 400 });
      }
      issued++;
      const access = `at-${issued + 1}`;
      valid.add(access);
      refreshTokens.add(`rt-${issued + 1}`);
      return new Response(JSON.stringify({ access_token: access, token_type: 'Bearer', expires_in: 60, refresh_token: `rt-${issued + 1}` }));
    }
    sent.push({ url, authorization: h.authorization });
    const token = (h.authorization ?? '').replace(/^Bearer /, '');
    if (refuseAll || !valid.has(token)) return new Response(JSON.stringify({ error: { code: 'unauthorized', message: 'no' } }), { status: 401 });
    return new Response(JSON.stringify({ ok: token }));
  });
  vi.stubGlobal('fetch', fetch);
  return {
    sent,
    valid,
    setProviderDown: (down: boolean) => {
      providerDown = down;
    },
    refuseEveryToken: () => {
      refuseAll = true;
    },
    tokenRequests: () => sent.filter((s) => s.url === TOKEN_ENDPOINT),
  };
}

describe('access token refresh', () => {
  let signOuts: string[];
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
    signOuts = [];
    onSignOut((r) => signOuts.push(r));
  });
  afterEach(() => {
    setKey('', false);
    vi.useRealTimers();
    vi.unstubAllGlobals();
  });

  it('refreshes a token near its expiry before the request, and uses the rotated refresh token next time', async () => {
    const net = fakeNetwork();
    net.valid.add('at-1');
    setToken('at-1', Date.now() + 60_000, grant('rt-1', 'https://api.example.com'));
    expect(await api('GET', '/conversations')).toEqual({ ok: 'at-1' });
    expect(net.tokenRequests()).toHaveLength(0);

    vi.setSystemTime(Date.now() + 31_000); // within 30 s of expiry
    expect(await api('GET', '/conversations')).toEqual({ ok: 'at-2' });
    expect(net.tokenRequests().map((s) => s.form)).toEqual([
      { grant_type: 'refresh_token', refresh_token: 'rt-1', client_id: 'kg-web', audience: 'https://api.example.com', resource: 'https://api.example.com' },
    ]);
    // The provider answers with no Authorization header of the API's.
    expect(net.tokenRequests()[0].authorization).toBeUndefined();

    vi.setSystemTime(Date.now() + 31_000);
    expect(await api('GET', '/conversations')).toEqual({ ok: 'at-3' });
    expect(net.tokenRequests().at(-1)?.form?.refresh_token).toBe('rt-2');
    // Tokens never appear in a URL.
    expect(net.sent.every((s) => !/at-\d|rt-\d/.test(s.url))).toBe(true);
    expect(signOuts).toEqual([]);
  });

  it('on a 401 refreshes once and sends the request again; a second 401 signs out', async () => {
    const net = fakeNetwork();
    setToken('at-1', Date.now() + 300_000, grant('rt-1')); // not accepted by the API
    expect(await api('GET', '/health')).toEqual({ ok: 'at-2' });
    expect(net.sent.map((s) => [s.url, s.authorization])).toEqual([
      ['/health', 'Bearer at-1'],
      [TOKEN_ENDPOINT, undefined],
      ['/health', 'Bearer at-2'],
    ]);
    expect(net.tokenRequests()[0].form).toEqual({ grant_type: 'refresh_token', refresh_token: 'rt-1', client_id: 'kg-web' });

    net.refuseEveryToken(); // e.g. the API's audience changed
    const e = await api('GET', '/health').catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).status).toBe(401);
    expect(net.tokenRequests()).toHaveLength(2); // one refresh for this request, not a loop
    expect(signOuts).toEqual(['rejected']);
    expect(hasKey()).toBe(false);
  });

  it('concurrent requests share one refresh', async () => {
    const net = fakeNetwork();
    setToken('at-1', Date.now() + 300_000, grant('rt-1'));
    const answers = await Promise.all([api('GET', '/a'), api('GET', '/b'), api('GET', '/c')]);
    expect(answers).toEqual([{ ok: 'at-2' }, { ok: 'at-2' }, { ok: 'at-2' }]);
    expect(net.tokenRequests()).toHaveLength(1);
  });

  it('without a refresh token, a 401 signs out at once', async () => {
    const net = fakeNetwork();
    setToken('at-1', Date.now() + 300_000);
    await expect(api('GET', '/health')).rejects.toBeInstanceOf(ApiError);
    expect(net.tokenRequests()).toHaveLength(0);
    expect(signOuts).toEqual(['rejected']);
  });

  it('the timer keeps an idle session alive, and signs out at expiry once the refresh is refused', async () => {
    const net = fakeNetwork();
    net.valid.add('at-1');
    setToken('at-1', Date.now() + 60_000, grant('rt-1'));
    await vi.advanceTimersByTimeAsync(31_000);
    expect(net.tokenRequests()).toHaveLength(1);
    expect(hasKey()).toBe(true);
    // A refresh token the provider does not know (revoked): the next refresh is refused.
    setToken('at-2', Date.now() + 60_000, grant('rt-unknown'));
    await vi.advanceTimersByTimeAsync(31_000);
    expect(net.tokenRequests().at(-1)?.form?.refresh_token).toBe('rt-unknown');
    expect(hasKey()).toBe(true); // still valid for 29 s
    expect(signOuts).toEqual([]);
    await vi.advanceTimersByTimeAsync(29_000);
    expect(signOuts).toEqual(['expired']);
    expect(net.tokenRequests()).toHaveLength(2); // a refused refresh token is not tried again
  });

  it('an unreachable provider is tried again at expiry before signing out', async () => {
    const net = fakeNetwork();
    net.valid.add('at-1');
    net.setProviderDown(true);
    setToken('at-1', Date.now() + 60_000, grant('rt-1'));
    await vi.advanceTimersByTimeAsync(31_000);
    expect(net.tokenRequests()).toHaveLength(1);
    net.setProviderDown(false);
    await vi.advanceTimersByTimeAsync(29_000);
    expect(net.tokenRequests()).toHaveLength(2);
    expect(signOuts).toEqual([]);
    expect(await api('GET', '/x')).toEqual({ ok: 'at-2' });
  });
});
