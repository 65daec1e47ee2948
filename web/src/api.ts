// The API client: every call carries the credential (a pasted API key or the OpenID Connect
// access token) as `Authorization: Bearer …`, never in a URL; failures become ApiError with
// the server's `code` when it sent one.
//
// `client` is openapi-fetch over the types generated from docs/openapi.json
// (src/api-schema.d.ts, `npm run api:types`): paths, parameters, bodies and answers are
// checked against the document. Streams go through it too (`parseAs: 'stream'`) and are
// read by ./sse.
//
// An access token with a refresh token is refreshed before it expires (a timer, and a check
// before each request), and once more when the API answers 401 — the request is then sent
// again with the new token. Without a refresh token, or when the refresh is refused, a 401
// or the token's expiry signs out (the credential is forgotten, the app shows sign-in).
import createClient from 'openapi-fetch';
import type { components, paths } from './api-schema';
import { readSse, type SseMessage } from './sse';
import { refreshAccessToken, SignInError, type RefreshGrant } from './oidc';

/** The document's schemas (`Schemas['ChatAnswer']`, …). */
export type Schemas = components['schemas'];

let apiKey = '';
let expiresAt: number | undefined;
/** When to refresh (before `expiresAt`); undefined: no refresh is due before expiry. */
let refreshAt: number | undefined;
let refreshGrant: RefreshGrant | undefined;
let refreshing: Promise<boolean> | undefined;
let expiryTimer: ReturnType<typeof setTimeout> | undefined;
const STORE = 'kg-agent.key';
const EXPIRES = 'kg-agent.key-expires';
const REFRESH = 'kg-agent.oidc.refresh';
/** Refresh this long before expiry, or at half the remaining lifetime when that is shorter. */
const REFRESH_EARLY_MS = 30_000;

export type SignOutReason = 'expired' | 'rejected';
let signedOut: ((reason: SignOutReason) => void) | undefined;
/** Called when the credential stops working (401) or the access token expires. */
export function onSignOut(f: (reason: SignOutReason) => void): void {
  signedOut = f;
}
function signOut(reason: SignOutReason): void {
  if (!apiKey) return;
  setKey('', false);
  signedOut?.(reason);
}

const refreshTime = (expires: number, now: number) => expires - Math.min(REFRESH_EARLY_MS, Math.max(expires - now, 0) / 2);

function schedule(): void {
  clearTimeout(expiryTimer);
  expiryTimer = undefined;
  if (!apiKey || expiresAt === undefined) return;
  const at = refreshGrant && refreshAt !== undefined ? refreshAt : expiresAt;
  expiryTimer = setTimeout(() => void onTimer(), Math.min(Math.max(at - Date.now(), 0), 2 ** 31 - 1));
}

async function onTimer(): Promise<void> {
  if (refreshGrant && (await refreshNow(apiKey))) return;
  if (expiresAt !== undefined && Date.now() < expiresAt) {
    // The refresh failed but the token still works: one more try at expiry, then sign out.
    refreshAt = undefined;
    schedule();
    return;
  }
  signOut('expired');
}

/**
 * Replaces the access token `used` with a refreshed one, once for everyone: concurrent
 * callers share one token request, and a caller whose token was already replaced gets
 * true at once. A refused refresh drops the refresh token (it cannot work again); an
 * unreachable provider keeps it. Never signs out itself.
 */
function refreshNow(used: string): Promise<boolean> {
  if (apiKey !== used) return Promise.resolve(apiKey !== '');
  const grant = refreshGrant;
  if (!grant) return Promise.resolve(false);
  refreshing ??= refreshAccessToken(grant)
    .then((s) => {
      // Signed out (or in as someone else) meanwhile: the answer is not wanted.
      if (apiKey !== used) return false;
      setToken(s.accessToken, s.expiresAt, s.refresh ?? grant);
      return true;
    })
    .catch((e: unknown) => {
      if (!(e instanceof SignInError && e.code === 'network') && refreshGrant === grant) {
        refreshGrant = undefined;
        store(REFRESH, undefined);
      }
      return false;
    })
    .finally(() => {
      refreshing = undefined;
    });
  return refreshing;
}

/** Refreshes the access token first when its refresh is due. */
async function freshCredential(): Promise<void> {
  if (refreshGrant && refreshAt !== undefined && Date.now() >= refreshAt) await refreshNow(apiKey);
}

function store(key: string, value: string | undefined): void {
  try {
    if (value === undefined) sessionStorage.removeItem(key);
    else sessionStorage.setItem(key, value);
  } catch {
    /* storage disabled: kept in memory only */
  }
}

function readGrant(raw: string | null): RefreshGrant | undefined {
  try {
    const g: unknown = raw ? JSON.parse(raw) : undefined;
    if (typeof g !== 'object' || g === null) return undefined;
    const o = g as Record<string, unknown>;
    if (typeof o.token_endpoint !== 'string' || typeof o.client_id !== 'string' || typeof o.refresh_token !== 'string') return undefined;
    return { token_endpoint: o.token_endpoint, client_id: o.client_id, refresh_token: o.refresh_token, audience: typeof o.audience === 'string' ? o.audience : undefined };
  } catch {
    return undefined;
  }
}

export function loadKey(): string {
  try {
    apiKey = sessionStorage.getItem(STORE) ?? '';
    const e = Number(sessionStorage.getItem(EXPIRES) ?? NaN);
    expiresAt = Number.isFinite(e) ? e : undefined;
    refreshGrant = apiKey ? readGrant(sessionStorage.getItem(REFRESH)) : undefined;
  } catch {
    apiKey = '';
  }
  refreshAt = expiresAt !== undefined ? refreshTime(expiresAt, Date.now()) : undefined;
  // An expired token is only kept when it can be refreshed (the timer does that at once).
  if (apiKey && expiresAt !== undefined && Date.now() >= expiresAt && !refreshGrant) setKey('', false);
  schedule();
  return apiKey;
}
/** A pasted API key: kept in this tab's sessionStorage when `remember`, else in memory. */
export function setKey(key: string, remember: boolean, expires?: number, refresh?: RefreshGrant): void {
  apiKey = key;
  expiresAt = key ? expires : undefined;
  refreshGrant = key && expires !== undefined ? refresh : undefined;
  refreshAt = expiresAt !== undefined ? refreshTime(expiresAt, Date.now()) : undefined;
  store(STORE, remember && key ? key : undefined);
  store(EXPIRES, remember && key && expires !== undefined ? String(expires) : undefined);
  store(REFRESH, remember && refreshGrant ? JSON.stringify(refreshGrant) : undefined);
  schedule();
}
/** The tokens of an OpenID Connect sign-in: in sessionStorage; the access token is
 * refreshed before `expires` when a refresh grant is given, else dropped at `expires`. */
export function setToken(token: string, expires?: number, refresh?: RefreshGrant): void {
  setKey(token, true, expires, refresh);
}
export const hasKey = (): boolean => apiKey !== '';

export class ApiError extends Error {
  constructor(
    public status: number,
    public code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The ApiError of a failed answer; `body` is what openapi-fetch read of it (the parsed
 * JSON, else the text; undefined when empty). The document's shape is
 * `{"error": {"code", "message", "detail"}}`; a bare `{"error": "code"}` is read too. */
function errorOf(res: Response, body: unknown): ApiError {
  let code = `http_${res.status}`;
  let message = res.statusText;
  if (typeof body === 'object' && body !== null) {
    const b = body as Record<string, unknown>;
    const e = (typeof b.error === 'object' && b.error !== null ? b.error : b) as Record<string, unknown>;
    if (typeof e.code === 'string') code = e.code;
    else if (typeof b.error === 'string') code = b.error;
    if (typeof e.message === 'string') message = e.message;
  }
  return new ApiError(res.status, code, message);
}

/** errorOf, and a 401 (after any refresh) signs out. */
function failure(res: Response, body: unknown): ApiError {
  if (res.status === 401) signOut('rejected');
  return errorOf(res, body);
}

/**
 * Sends one request of the client with the credential: refreshed first when due; on a 401,
 * refreshed once and sent again (when there is a refresh token). Network failures become
 * ApiError `network`; an abort stays an AbortError. The answer is returned whatever its
 * status.
 */
async function send(request: Request): Promise<Response> {
  await freshCredential();
  // Kept unsent for a second try (a body can be read once).
  const again = request.clone();
  const once = async (req: Request) => {
    const used = apiKey;
    if (used) req.headers.set('authorization', `Bearer ${used}`);
    try {
      return { res: await fetch(req), used };
    } catch (e) {
      if (e instanceof DOMException && e.name === 'AbortError') throw e;
      throw new ApiError(0, 'network', String(e));
    }
  };
  const first = await once(request);
  if (first.res.status !== 401 || !first.used || !(await refreshNow(first.used))) return first.res;
  return (await once(again)).res;
}

export const client = createClient<paths>({
  // The page's own origin: the same requests as relative paths, and a whole URL where there
  // is no page to resolve one against (the unit tests set `location`).
  baseUrl: globalThis.location?.origin,
  headers: { accept: 'application/json' },
  fetch: send,
});

/** The data of a client call; a failure throws ApiError. An empty body reads as {}. */
export async function ok<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw failure(response, error);
  return data === undefined ? ({} as T) : data;
}

/** GET /health: the report, also when something is down (503 with the same body). Any
 * JSON object is handed on as it came (an error's body too); anything else is ApiError. */
export async function health(): Promise<Partial<Schemas['HealthReport']>> {
  const { data, error, response } = await client.GET('/health');
  const body: unknown = data ?? error;
  if (typeof body !== 'object' || body === null) throw errorOf(response, body);
  return body as Partial<Schemas['HealthReport']>;
}

/** The body of a stream that opened; throws ApiError before the stream opens. */
function opened(answer: { error?: unknown; response: Response }): ReadableStream<Uint8Array> {
  const res = answer.response;
  if (!res.ok) throw failure(res, answer.error);
  if (!res.body) throw new ApiError(res.status, 'no_body', 'empty response');
  return res.body;
}

/** POST /chat/stream: yields the SSE messages (ChatEvent payloads, ./reducer reads them). */
export async function* chatStream(body: Schemas['ChatRequest'], signal: AbortSignal): AsyncGenerator<SseMessage> {
  const answer = await client.POST('/chat/stream', { body, signal, headers: { accept: 'text/event-stream' }, parseAs: 'stream' });
  yield* readSse(opened(answer));
}

/** GET /chat/stream/{turn_id}: the rest of a turn's events after `lastEventId` (sent as the
 * Last-Event-ID header, like the credential never in the URL). */
export async function* resumeStream(turnId: string, lastEventId: string | undefined, signal: AbortSignal): AsyncGenerator<SseMessage> {
  const answer = await client.GET('/chat/stream/{turn_id}', {
    params: { path: { turn_id: turnId }, header: { 'Last-Event-ID': lastEventId } },
    headers: { accept: 'text/event-stream' },
    signal,
    parseAs: 'stream',
  });
  yield* readSse(opened(answer));
}

/** POST /chat/approve. Asks for a stream (live batch progress) and takes JSON as well: the
 * dispatcher answers JSON today; a streamed answer is read as the agent's events. */
export async function approveTurn(
  body: Schemas['ChatApproveRequest'],
): Promise<{ json: Schemas['ChatAnswer'] } | { events: AsyncGenerator<SseMessage> }> {
  const { error, response: res } = await client.POST('/chat/approve', {
    body,
    headers: { accept: 'text/event-stream, application/json' },
    parseAs: 'stream',
  });
  if (!res.ok) throw failure(res, error);
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream') && res.body) {
    return { events: readSse(res.body) };
  }
  return { json: (await res.json()) as Schemas['ChatAnswer'] };
}
