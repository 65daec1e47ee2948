// The API client: every call carries the credential (a pasted API key or the OpenID Connect
// access token) as `Authorization: Bearer …`, never in a URL; failures become ApiError with
// the server's `code` when it sent one. A 401, or an access token reaching its expiry, signs
// out (the credential is forgotten and the app shows the sign-in page).
import { readSse, type SseMessage } from './sse';

let apiKey = '';
let expiresAt: number | undefined;
let expiryTimer: ReturnType<typeof setTimeout> | undefined;
const STORE = 'kg-agent.key';
const EXPIRES = 'kg-agent.key-expires';

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
function schedule(): void {
  clearTimeout(expiryTimer);
  expiryTimer = undefined;
  if (expiresAt !== undefined) expiryTimer = setTimeout(() => signOut('expired'), Math.min(Math.max(expiresAt - Date.now(), 0), 2 ** 31 - 1));
}

export function loadKey(): string {
  try {
    apiKey = sessionStorage.getItem(STORE) ?? '';
    const e = Number(sessionStorage.getItem(EXPIRES) ?? NaN);
    expiresAt = Number.isFinite(e) ? e : undefined;
  } catch {
    apiKey = '';
  }
  if (apiKey && expiresAt !== undefined && Date.now() >= expiresAt) setKey('', false);
  schedule();
  return apiKey;
}
/** A pasted API key: kept in this tab's sessionStorage when `remember`, else in memory. */
export function setKey(key: string, remember: boolean, expires?: number): void {
  apiKey = key;
  expiresAt = key ? expires : undefined;
  try {
    if (remember && key) sessionStorage.setItem(STORE, key);
    else sessionStorage.removeItem(STORE);
    if (remember && key && expires !== undefined) sessionStorage.setItem(EXPIRES, String(expires));
    else sessionStorage.removeItem(EXPIRES);
  } catch {
    /* storage disabled: the key stays in memory only */
  }
  schedule();
}
/** The access token of an OpenID Connect sign-in: in sessionStorage, until `expires`. */
export function setToken(token: string, expires?: number): void {
  setKey(token, true, expires);
}
export const hasKey = (): boolean => apiKey !== '';
export const authHeaders = (): Record<string, string> => headers();

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

export async function api<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers: headers(body === undefined ? {} : { 'content-type': 'application/json' }),
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
  } catch (e) {
    if (e instanceof DOMException && e.name === 'AbortError') throw e;
    throw new ApiError(0, 'network', String(e));
  }
  if (!res.ok) throw await failure(res);
  const text = await res.text();
  return (text ? JSON.parse(text) : {}) as T;
}

/** POST /chat/stream: yields the SSE messages; throws ApiError before the stream opens. */
export async function* chatStream(
  body: { message: string; conversation_id?: string },
  signal: AbortSignal,
): AsyncGenerator<SseMessage> {
  let res: Response;
  try {
    res = await fetch('/chat/stream', {
      method: 'POST',
      headers: headers({ 'content-type': 'application/json', accept: 'text/event-stream' }),
      body: JSON.stringify(body),
      signal,
    });
  } catch (e) {
    if (e instanceof DOMException && e.name === 'AbortError') throw e;
    throw new ApiError(0, 'network', String(e));
  }
  if (!res.ok) throw await failure(res);
  if (!res.body) throw new ApiError(res.status, 'no_body', 'empty response');
  yield* readSse(res.body);
}

/** POST /chat/approve. Asks for a stream (live batch progress) and takes JSON as well: the
 * dispatcher answers JSON today; a streamed answer is read as the agent's events. */
export async function approveTurn(
  body: { approval_token: string; approve: boolean },
): Promise<{ json: Record<string, unknown> } | { events: AsyncGenerator<SseMessage> }> {
  let res: Response;
  try {
    res = await fetch('/chat/approve', {
      method: 'POST',
      headers: headers({ 'content-type': 'application/json', accept: 'text/event-stream, application/json' }),
      body: JSON.stringify(body),
    });
  } catch (e) {
    throw new ApiError(0, 'network', String(e));
  }
  if (!res.ok) throw await failure(res);
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream') && res.body) {
    return { events: readSse(res.body) };
  }
  return { json: (await res.json()) as Record<string, unknown> };
}
