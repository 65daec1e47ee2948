import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError, client, hasKey, health, ok, onSignOut, setKey, setToken } from './api';

// The page's origin, which the client's URLs start with (set before ./api loads).
vi.hoisted(() => vi.stubGlobal('location', new URL('http://kg.test/')));
const ORIGIN = 'http://kg.test';
/** The path and query of one of the client's requests. */
const local = (url: string) => (url.startsWith(`${ORIGIN}/`) ? url.slice(ORIGIN.length) : url);

const get = (path: '/conversations' | '/health' | '/documents' | '/actions' | '/tools') => ok(client.GET(path));

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
  // The token endpoint is called with (url, init) by ./oidc, the API with a Request by the client.
  const fetch = vi.fn(async (input: string | Request, init: RequestInit = {}) => {
    const url = typeof input === 'string' ? input : local(input.url);
    const h = typeof input === 'string' ? ((init.headers ?? {}) as Record<string, string>) : { authorization: input.headers.get('authorization') ?? undefined };
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
    expect(await get('/conversations')).toEqual({ ok: 'at-1' });
    expect(net.tokenRequests()).toHaveLength(0);

    vi.setSystemTime(Date.now() + 31_000); // within 30 s of expiry
    expect(await get('/conversations')).toEqual({ ok: 'at-2' });
    expect(net.tokenRequests().map((s) => s.form)).toEqual([
      { grant_type: 'refresh_token', refresh_token: 'rt-1', client_id: 'kg-web', audience: 'https://api.example.com', resource: 'https://api.example.com' },
    ]);
    // The provider answers with no Authorization header of the API's.
    expect(net.tokenRequests()[0].authorization).toBeUndefined();

    vi.setSystemTime(Date.now() + 31_000);
    expect(await get('/conversations')).toEqual({ ok: 'at-3' });
    expect(net.tokenRequests().at(-1)?.form?.refresh_token).toBe('rt-2');
    // Tokens never appear in a URL.
    expect(net.sent.every((s) => !/at-\d|rt-\d/.test(s.url))).toBe(true);
    expect(signOuts).toEqual([]);
  });

  it('on a 401 refreshes once and sends the request again; a second 401 signs out', async () => {
    const net = fakeNetwork();
    setToken('at-1', Date.now() + 300_000, grant('rt-1')); // not accepted by the API
    expect(await get('/health')).toEqual({ ok: 'at-2' });
    expect(net.sent.map((s) => [s.url, s.authorization])).toEqual([
      ['/health', 'Bearer at-1'],
      [TOKEN_ENDPOINT, undefined],
      ['/health', 'Bearer at-2'],
    ]);
    expect(net.tokenRequests()[0].form).toEqual({ grant_type: 'refresh_token', refresh_token: 'rt-1', client_id: 'kg-web' });

    net.refuseEveryToken(); // e.g. the API's audience changed
    const e = await get('/health').catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).status).toBe(401);
    expect(net.tokenRequests()).toHaveLength(2); // one refresh for this request, not a loop
    expect(signOuts).toEqual(['rejected']);
    expect(hasKey()).toBe(false);
  });

  it('concurrent requests share one refresh', async () => {
    const net = fakeNetwork();
    setToken('at-1', Date.now() + 300_000, grant('rt-1'));
    const answers = await Promise.all([get('/conversations'), get('/documents'), get('/actions')]);
    expect(answers).toEqual([{ ok: 'at-2' }, { ok: 'at-2' }, { ok: 'at-2' }]);
    expect(net.tokenRequests()).toHaveLength(1);
  });

  it('without a refresh token, a 401 signs out at once', async () => {
    const net = fakeNetwork();
    setToken('at-1', Date.now() + 300_000);
    await expect(get('/health')).rejects.toBeInstanceOf(ApiError);
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
    expect(await get('/tools')).toEqual({ ok: 'at-2' });
  });
});

describe('requests and errors', () => {
  interface Seen {
    method: string;
    url: string;
    headers: Record<string, string>;
    body: string;
  }
  /** Records each request (the client's, and ./oidc's token requests); `answer` makes the
   * response (`n`: how many came before). */
  function serve(answer: (n: number, seen: Seen) => Response | Promise<Response>) {
    const seen: Seen[] = [];
    vi.stubGlobal(
      'fetch',
      vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
        const req = input instanceof Request ? input : new Request(input, init);
        const s = { method: req.method, url: local(req.url), headers: Object.fromEntries(req.headers), body: await req.text() };
        seen.push(s);
        return answer(seen.length - 1, s);
      }),
    );
    return seen;
  }
  const json = (body: unknown, status = 200, statusText = '') => new Response(JSON.stringify(body), { status, statusText, headers: { 'content-type': 'application/json' } });
  const failed = (p: Promise<unknown>) => p.then(() => expect.unreachable(), (e: unknown) => e as ApiError);

  afterEach(() => {
    setKey('', false);
    vi.unstubAllGlobals();
  });

  it('sends the path, query, JSON body and headers the document gives, the credential as a header', async () => {
    setKey('kga_secret', false);
    const seen = serve(() => json({ entries: [], next_cursor: null }));
    await ok(client.GET('/actions/log', { params: { query: { limit: 50 } } }));
    await ok(client.POST('/actions/log/{log_id}/undo', { params: { path: { log_id: 'a b/c' } }, body: {} }));
    await ok(client.POST('/search', { body: { query: 'q', top_k: 5 } }));
    await ok(client.DELETE('/documents/{id}', { params: { path: { id: 'd1' } } }));
    expect(seen.map((s) => [s.method, s.url, s.body])).toEqual([
      ['GET', '/actions/log?limit=50', ''],
      ['POST', '/actions/log/a%20b%2Fc/undo', '{}'],
      ['POST', '/search', '{"query":"q","top_k":5}'],
      ['DELETE', '/documents/d1', ''],
    ]);
    for (const s of seen) {
      expect(s.headers.authorization).toBe('Bearer kga_secret');
      expect(s.headers.accept).toBe('application/json');
      expect(s.headers['content-type']).toBe(s.body ? 'application/json' : undefined);
    }
  });

  it('without a credential sends no Authorization header', async () => {
    const seen = serve(() => json({ documents: [] }));
    expect(await ok(client.GET('/documents'))).toEqual({ documents: [] });
    expect(seen[0].headers.authorization).toBeUndefined();
  });

  it('an empty answer reads as {}', async () => {
    serve(() => new Response(null, { status: 200 }));
    expect(await ok(client.DELETE('/conversations/{id}', { params: { path: { id: 'c1' } } }))).toEqual({});
  });

  it('maps error bodies to ApiError: the document shape, a bare code, and anything else', async () => {
    const bodies = [
      json({ error: { code: 'conflict', message: 'in use', detail: { id: 'd1' } } }, 409, 'Conflict'),
      json({ error: 'invalid_grant' }, 400, 'Bad Request'),
      new Response('<html>bad gateway</html>', { status: 502, statusText: 'Bad Gateway' }),
      new Response(null, { status: 503, statusText: 'Service Unavailable' }),
    ];
    serve((n) => bodies[n]);
    const errors = [];
    for (let i = 0; i < bodies.length; i++) errors.push(await failed(ok(client.GET('/documents'))));
    expect(errors.every((e) => e instanceof ApiError)).toBe(true);
    expect(errors.map((e) => [e.status, e.code, e.message])).toEqual([
      [409, 'conflict', 'in use'],
      [400, 'invalid_grant', 'Bad Request'],
      [502, 'http_502', 'Bad Gateway'],
      [503, 'http_503', 'Service Unavailable'],
    ]);
  });

  it('a network failure is ApiError network; an abort stays an AbortError', async () => {
    vi.stubGlobal(
      'fetch',
      vi.fn(async () => {
        throw new TypeError('Failed to fetch');
      }),
    );
    const e = await failed(ok(client.GET('/documents')));
    expect([e.status, e.code]).toEqual([0, 'network']);
    vi.stubGlobal(
      'fetch',
      vi.fn(async () => {
        throw new DOMException('aborted', 'AbortError');
      }),
    );
    const a = await ok(client.GET('/documents')).catch((x: unknown) => x);
    expect((a as DOMException).name).toBe('AbortError');
  });

  it('sends a POST body again after a refresh on 401', async () => {
    setToken('at-1', Date.now() + 300_000, grant('rt-1'));
    const seen = serve((n, s) => {
      if (s.url === TOKEN_ENDPOINT) return json({ access_token: 'at-2', token_type: 'Bearer', expires_in: 60 });
      return n === 0 ? json({ error: { code: 'unauthorized', message: 'no' } }, 401) : json({ query: 'q', hits: [], legs: [], warnings: [] });
    });
    expect(await ok(client.POST('/search', { body: { query: 'q' } }))).toEqual({ query: 'q', hits: [], legs: [], warnings: [] });
    expect(seen.map((s) => [s.method, s.url, s.headers.authorization, s.body])).toEqual([
      ['POST', '/search', 'Bearer at-1', '{"query":"q"}'],
      ['POST', TOKEN_ENDPOINT, undefined, expect.stringContaining('grant_type=refresh_token')],
      ['POST', '/search', 'Bearer at-2', '{"query":"q"}'],
    ]);
  });

  it('GET /health hands on the report also when something is down (503)', async () => {
    const report = { status: 'degraded', version: '1', components: [], problems: ['kv'] };
    const bodies = [json(report, 503), new Response('down', { status: 502, statusText: 'Bad Gateway' })];
    serve((n) => bodies[n]);
    expect(await health()).toEqual(report);
    expect([(await failed(health())).code]).toEqual(['http_502']);
  });
});
