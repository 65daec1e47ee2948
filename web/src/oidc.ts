// Sign-in with the OpenID Connect provider the service trusts: authorization code + PKCE
// (S256) for a public client (no secret), written on WebCrypto and fetch only (RFC 6749
// §4.1, RFC 7636, RFC 8414 discovery, RFC 9207 `iss`). The app needs the access token,
// which the API verifies itself (signature, iss, aud, exp); it does not use an ID token.
//
// What is kept where: the PKCE verifier, the state and the endpoints wait in sessionStorage
// for the provider's redirect back (one tab, removed when the callback is handled); the
// code is taken out of the address bar (history.replaceState) before it is exchanged; the
// access token (and the refresh token, when the provider issues one) goes to api.ts, which
// keeps it in sessionStorage only and refreshes the access token before it expires
// (grant_type=refresh_token, RFC 6749 §6). Tokens only travel in POST bodies and the
// Authorization header, never in a URL. Nothing here logs.

export interface OidcClient {
  issuer: string;
  client_id: string;
  scopes: string;
  /** The API's audience (`oidc_audience`), asked for when the service names it. */
  audience?: string;
}
export interface AuthConfig {
  modes: string[];
  oidc: OidcClient | null;
}
export interface SignedIn {
  accessToken: string;
  /** Epoch milliseconds after which the token is no longer sent; undefined: not given. */
  expiresAt?: number;
  /** What a refresh needs, when the provider issued a refresh token. */
  refresh?: RefreshGrant;
}

/** A refresh token and where to use it (a public client: no secret). */
export interface RefreshGrant {
  token_endpoint: string;
  client_id: string;
  refresh_token: string;
  audience?: string;
}

/** A failed sign-in, with a code the UI translates (`state_mismatch`, `provider`, …). */
export class SignInError extends Error {
  constructor(
    public code: string,
    message: string,
  ) {
    super(message);
  }
}

const PENDING = 'kg-agent.oidc.pending';

interface Pending {
  state: string;
  verifier: string;
  issuer: string;
  client_id: string;
  redirect_uri: string;
  token_endpoint: string;
  audience?: string;
}

/** The audience as request parameters: `audience` (as Auth0 and others read it) and, when
 * it is an absolute URI, the standard `resource` (RFC 8707). Providers ignore the one they
 * do not know (RFC 6749 §3.1). */
export function audienceParams(audience: string | undefined): [string, string][] {
  if (!audience) return [];
  const params: [string, string][] = [['audience', audience]];
  if (/^https?:\/\/[^\s#]+$/i.test(audience)) params.push(['resource', audience]);
  return params;
}

/** Unpadded base64url (RFC 4648 §5). */
export function base64url(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** `n` random bytes as base64url: 32 give a 43-character PKCE verifier (RFC 7636 §4.1). */
export function randomString(n = 32): string {
  return base64url(crypto.getRandomValues(new Uint8Array(n)));
}

/** The S256 code challenge of a verifier: base64url(SHA-256(ASCII(verifier))). */
export async function codeChallenge(verifier: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier));
  return base64url(new Uint8Array(digest));
}

/** Reads the provider's answer on the redirect URI: the code when the state is the one
 * this tab sent (and `iss`, when given, is the issuer), else a SignInError. */
export function checkCallback(params: URLSearchParams, pending: Pick<Pending, 'state' | 'issuer'> | null): string {
  if (!pending) throw new SignInError('no_pending', 'no sign-in was started in this tab');
  const state = params.get('state');
  if (!state || state !== pending.state) throw new SignInError('state_mismatch', 'the sign-in answer does not match the request');
  const iss = params.get('iss');
  if (iss !== null && iss !== pending.issuer) throw new SignInError('issuer_mismatch', 'the sign-in answer comes from another issuer');
  const error = params.get('error');
  if (error) throw new SignInError('provider', params.get('error_description') ?? error);
  const code = params.get('code');
  if (!code) throw new SignInError('provider', 'the provider sent no code');
  return code;
}

/** True when the address carries an answer from the provider (`code` or `error` with `state`). */
export function isCallback(search: string): boolean {
  const p = new URLSearchParams(search);
  return p.has('state') && (p.has('code') || p.has('error'));
}

async function getJson(url: string, init?: RequestInit): Promise<Record<string, unknown>> {
  let res: Response;
  try {
    res = await fetch(url, init);
  } catch (e) {
    throw new SignInError('network', `${new URL(url).origin} is not reachable`);
  }
  let body: unknown;
  try {
    body = await res.json();
  } catch {
    body = undefined;
  }
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  if (!res.ok) {
    const detail = typeof b.error_description === 'string' ? b.error_description : typeof b.error === 'string' ? b.error : `HTTP ${res.status}`;
    throw new SignInError('token', detail);
  }
  return b;
}

/** The provider's endpoints from its discovery document; its `issuer` must be the one
 * configured (RFC 8414 §3.3), and it must offer S256 when it lists PKCE methods. */
export async function discover(issuer: string): Promise<{ authorization_endpoint: string; token_endpoint: string }> {
  const meta = await getJson(`${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`, { headers: { accept: 'application/json' } });
  if (meta.issuer !== issuer) throw new SignInError('discovery', 'the discovery document names another issuer');
  const methods = meta.code_challenge_methods_supported;
  if (Array.isArray(methods) && !methods.includes('S256')) throw new SignInError('discovery', 'the provider does not offer PKCE with S256');
  const { authorization_endpoint: authorize, token_endpoint: token } = meta;
  if (typeof authorize !== 'string' || typeof token !== 'string') throw new SignInError('discovery', 'the discovery document has no endpoints');
  return { authorization_endpoint: authorize, token_endpoint: token };
}

/** The redirect URI: this app's root (the provider must have it registered exactly). */
export const redirectUri = (): string => `${location.origin}/`;

/** Starts a sign-in: remembers the verifier and state for this tab, then goes to the
 * provider's authorization endpoint. Returns the URL it navigates to (for tests). */
export async function begin(client: OidcClient, go: (url: string) => void = (u) => location.assign(u)): Promise<string> {
  const { authorization_endpoint, token_endpoint } = await discover(client.issuer);
  const pending: Pending = {
    state: randomString(),
    verifier: randomString(),
    issuer: client.issuer,
    client_id: client.client_id,
    redirect_uri: redirectUri(),
    token_endpoint,
    audience: client.audience,
  };
  sessionStorage.setItem(PENDING, JSON.stringify(pending));
  const url = new URL(authorization_endpoint);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', client.client_id);
  url.searchParams.set('redirect_uri', pending.redirect_uri);
  url.searchParams.set('scope', client.scopes || 'openid');
  url.searchParams.set('state', pending.state);
  url.searchParams.set('code_challenge', await codeChallenge(pending.verifier));
  url.searchParams.set('code_challenge_method', 'S256');
  for (const [k, v] of audienceParams(client.audience)) url.searchParams.set(k, v);
  go(url.toString());
  return url.toString();
}

function takePending(): Pending | null {
  try {
    const raw = sessionStorage.getItem(PENDING);
    sessionStorage.removeItem(PENDING);
    const p: unknown = raw ? JSON.parse(raw) : null;
    return p && typeof p === 'object' ? (p as Pending) : null;
  } catch {
    return null;
  }
}

/** Handles the provider's redirect back: takes the code out of the address bar at once,
 * checks the state, and exchanges the code (with the verifier) for an access token. The
 * pending sign-in is used once, whatever the outcome. */
export async function complete(): Promise<SignedIn> {
  const params = new URLSearchParams(location.search);
  history.replaceState(history.state, '', `${location.pathname}${location.hash}`);
  const pending = takePending();
  const code = checkCallback(params, pending);
  const p = pending as Pending;
  const body = new URLSearchParams({
    grant_type: 'authorization_code',
    code,
    redirect_uri: p.redirect_uri,
    client_id: p.client_id,
    code_verifier: p.verifier,
  });
  for (const [k, v] of audienceParams(p.audience)) body.append(k, v);
  const t = await postForm(p.token_endpoint, body);
  return signedIn(t, { token_endpoint: p.token_endpoint, client_id: p.client_id, audience: p.audience });
}

function postForm(url: string, body: URLSearchParams): Promise<Record<string, unknown>> {
  return getJson(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body,
    // The token endpoint needs no cookie of the provider's: this is a public client.
    credentials: 'omit',
  });
}

/** A token endpoint's answer (RFC 6749 §5.1); `previous`: the refresh token to keep
 * when the answer does not rotate it (§6). */
function signedIn(t: Record<string, unknown>, endpoint: Omit<RefreshGrant, 'refresh_token'>, previous?: string): SignedIn {
  if (typeof t.access_token !== 'string' || !t.access_token) throw new SignInError('token', 'the provider sent no access token');
  if (typeof t.token_type === 'string' && t.token_type.toLowerCase() !== 'bearer') throw new SignInError('token', `unsupported token type ${t.token_type}`);
  const expiresIn = typeof t.expires_in === 'number' ? t.expires_in : Number(t.expires_in);
  const refreshToken = typeof t.refresh_token === 'string' && t.refresh_token ? t.refresh_token : previous;
  return {
    accessToken: t.access_token,
    expiresAt: Number.isFinite(expiresIn) && expiresIn > 0 ? Date.now() + expiresIn * 1000 : undefined,
    refresh: refreshToken ? { ...endpoint, refresh_token: refreshToken } : undefined,
  };
}

/** A new access token for a refresh token (RFC 6749 §6), with the same client and
 * audience. A refused refresh is a SignInError with code `refused`; an unreachable
 * provider one with code `network` (worth another try). */
export async function refreshAccessToken(grant: RefreshGrant): Promise<SignedIn> {
  const body = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: grant.refresh_token, client_id: grant.client_id });
  for (const [k, v] of audienceParams(grant.audience)) body.append(k, v);
  let t: Record<string, unknown>;
  try {
    t = await postForm(grant.token_endpoint, body);
  } catch (e) {
    if (e instanceof SignInError && e.code === 'token') throw new SignInError('refused', e.message);
    throw e;
  }
  const { token_endpoint, client_id, audience } = grant;
  return signedIn(t, { token_endpoint, client_id, audience }, grant.refresh_token);
}

/** `GET /auth/config`: how this service lets people sign in (API keys only when it cannot be read). */
export async function authConfig(): Promise<AuthConfig> {
  try {
    const res = await fetch('/auth/config', { headers: { accept: 'application/json' } });
    const c = (await res.json()) as Partial<AuthConfig>;
    const o = c.oidc;
    const oidc =
      o && typeof o.issuer === 'string' && typeof o.client_id === 'string'
        ? {
            issuer: o.issuer,
            client_id: o.client_id,
            scopes: typeof o.scopes === 'string' ? o.scopes : 'openid',
            audience: typeof o.audience === 'string' && o.audience ? o.audience : undefined,
          }
        : null;
    return { modes: Array.isArray(c.modes) ? c.modes.filter((m): m is string => typeof m === 'string') : ['api_key'], oidc };
  } catch {
    return { modes: ['api_key'], oidc: null };
  }
}
