// The API client: every call carries the credential (a pasted API key or the OpenID Connect
// access token) as `Authorization: Bearer …`, never in a URL; failures become ApiError with
// the server's `code` when it sent one.
//
// An access token with a refresh token is refreshed before it expires (a timer, and a check
// before each request), and once more when the API answers 401 — the request is then sent
// again with the new token. Without a refresh token, or when the refresh is refused, a 401
// or the token's expiry signs out (the credential is forgotten, the app shows sign-in).
import { readSse, type SseMessage } from './sse';
import { refreshAccessToken, SignInError, type RefreshGrant } from './oidc';

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

function headers(extra: Record<string, string> = {}): Record<string, string> {
  const h: Record<string, string> = { accept: 'application/json', ...extra };
  if (apiKey) h.authorization = `Bearer ${apiKey}`;
  return h;
}

async function failure(res: Response): Promise<ApiError> {
  if (res.status === 401) signOut('rejected');
  let code = `http_${res.status}`;
  let message = res.statusText;
  try {
    const body: unknown = await res.json();
    if (typeof body === 'object' && body !== null) {
      const b = body as Record<string, unknown>;
      const e = (typeof b.error === 'object' && b.error !== null ? b.error : b) as Record<string, unknown>;
      if (typeof e.code === 'string') code = e.code;
      else if (typeof b.error === 'string') code = b.error;
      if (typeof e.message === 'string') message = e.message;
    }
  } catch {
    /* not JSON */
  }
  return new ApiError(res.status, code, message);
}

interface Call {
  method: string;
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

/**
 * One request with the credential: refreshed first when due; on a 401, refreshed once and
 * sent again (when there is a refresh token). Network failures become ApiError `network`;
 * an abort stays an AbortError. The answer is returned whatever its status.
 */
export async function send(path: string, call: Call): Promise<Response> {
  await freshCredential();
  const once = async () => {
    const used = apiKey;
    try {
      const res = await fetch(path, { method: call.method, headers: headers(call.headers), body: call.body, signal: call.signal });
      return { res, used };
    } catch (e) {
      if (e instanceof DOMException && e.name === 'AbortError') throw e;
      throw new ApiError(0, 'network', String(e));
    }
  };
  const first = await once();
  if (first.res.status !== 401 || !first.used || !(await refreshNow(first.used))) return first.res;
  return (await once()).res;
}

export async function api<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  const res = await send(path, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
  });
  if (!res.ok) throw await failure(res);
  const text = await res.text();
  return (text ? JSON.parse(text) : {}) as T;
}

/** POST /chat/stream: yields the SSE messages; throws ApiError before the stream opens. */
export async function* chatStream(
  body: { message: string; conversation_id?: string },
  signal: AbortSignal,
): AsyncGenerator<SseMessage> {
  const res = await send('/chat/stream', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify(body),
    signal,
  });
  if (!res.ok) throw await failure(res);
  if (!res.body) throw new ApiError(res.status, 'no_body', 'empty response');
  yield* readSse(res.body);
}

/** GET /chat/stream/{turn_id}: the rest of a turn's events after `lastEventId` (sent as the
 * Last-Event-ID header, like the credential never in the URL). */
export async function* resumeStream(turnId: string, lastEventId: string | undefined, signal: AbortSignal): AsyncGenerator<SseMessage> {
  const res = await send(`/chat/stream/${encodeURIComponent(turnId)}`, {
    method: 'GET',
    headers: { accept: 'text/event-stream', ...(lastEventId !== undefined ? { 'last-event-id': lastEventId } : {}) },
    signal,
  });
  if (!res.ok) throw await failure(res);
  if (!res.body) throw new ApiError(res.status, 'no_body', 'empty response');
  yield* readSse(res.body);
}

/** POST /chat/approve. Asks for a stream (live batch progress) and takes JSON as well: the
 * dispatcher answers JSON today; a streamed answer is read as the agent's events. */
export async function approveTurn(
  body: { approval_token: string; approve: boolean },
): Promise<{ json: Record<string, unknown> } | { events: AsyncGenerator<SseMessage> }> {
  const res = await send('/chat/approve', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream, application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw await failure(res);
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream') && res.body) {
    return { events: readSse(res.body) };
  }
  return { json: (await res.json()) as Record<string, unknown> };
}
