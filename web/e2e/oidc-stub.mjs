// A small OpenID Connect provider for the browser tests: discovery, JWKS, an authorization
// endpoint that signs the configured user in at once (no login form) and redirects back
// with a code, and a token endpoint for public clients that checks PKCE (S256) and answers
// an ES256 access token signed with node:crypto. Codes are single-use and bound to the
// client, the redirect URI and the code challenge, as a real provider binds them. With
// `refreshTokens` on, it also issues refresh tokens: rotated on each use (a used or revoked
// one is refused with invalid_grant) and bound to the client.
import { createServer } from 'node:http';
import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto';

const b64url = (buf) => Buffer.from(buf).toString('base64url');

export function startOidcStub({ clientId, redirectUri, audience }) {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const kid = `es-${randomBytes(4).toString('hex')}`;
  const jwk = { ...publicKey.export({ format: 'jwk' }), kid, alg: 'ES256', use: 'sig' };
  const codes = new Map();
  const refreshTokens = new Map();
  const stub = {
    origin: '',
    /** Who the next authorization signs in. */
    user: { sub: 'oidc-alice', roles: ['admin'] },
    /** Lifetime of the next access tokens, in seconds. */
    expiresIn: 300,
    /** The `aud` of the next access tokens. */
    audience,
    /** When set, the next redirect carries this state instead of the client's (a forged answer). */
    forgeState: undefined,
    /** Whether token answers carry a refresh token. */
    refreshTokens: false,
    /** Refuses every refresh token issued so far (a revoked session). */
    revokeRefreshTokens: () => refreshTokens.clear(),
    /** Every authorization request and token request, with what was answered. */
    authorizations: [],
    tokenRequests: [],
    issued: [],
  };

  function jwt(claims) {
    const head = b64url(JSON.stringify({ alg: 'ES256', typ: 'JWT', kid }));
    const body = b64url(JSON.stringify(claims));
    const signature = sign('sha256', Buffer.from(`${head}.${body}`), { key: privateKey, dsaEncoding: 'ieee-p1363' });
    return `${head}.${body}.${b64url(signature)}`;
  }

  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const url = new URL(req.url, stub.origin);
      // The app reads discovery and the token answer from its own origin: CORS for it.
      const cors = req.headers.origin ? { 'access-control-allow-origin': req.headers.origin, vary: 'Origin' } : {};
      const json = (status, v) => {
        res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...cors });
        res.end(JSON.stringify(v));
      };
      if (req.method === 'OPTIONS') {
        res.writeHead(204, { ...cors, 'access-control-allow-methods': 'GET, POST', 'access-control-allow-headers': 'content-type, accept' });
        return res.end();
      }
      if (url.pathname === '/.well-known/openid-configuration') {
        return json(200, {
          issuer: stub.origin,
          authorization_endpoint: `${stub.origin}/authorize`,
          token_endpoint: `${stub.origin}/token`,
          jwks_uri: `${stub.origin}/jwks`,
          response_types_supported: ['code'],
          grant_types_supported: ['authorization_code', 'refresh_token'],
          code_challenge_methods_supported: ['S256'],
          token_endpoint_auth_methods_supported: ['none'],
          id_token_signing_alg_values_supported: ['ES256'],
          authorization_response_iss_parameter_supported: true,
        });
      }
      if (url.pathname === '/jwks') return json(200, { keys: [jwk] });
      if (url.pathname === '/authorize' && req.method === 'GET') {
        const q = Object.fromEntries(url.searchParams);
        stub.authorizations.push(q);
        const bad = (m) => {
          res.writeHead(400, { 'content-type': 'text/plain' });
          res.end(m);
        };
        if (q.client_id !== clientId) return bad('unknown client');
        if (q.redirect_uri !== redirectUri()) return bad('redirect_uri not registered');
        if (q.response_type !== 'code') return bad('response_type must be code');
        if (q.code_challenge_method !== 'S256' || !/^[A-Za-z0-9_-]{43}$/.test(q.code_challenge ?? '')) return bad('PKCE with S256 is required');
        const code = b64url(randomBytes(24));
        codes.set(code, { challenge: q.code_challenge, clientId: q.client_id, redirectUri: q.redirect_uri, user: stub.user, scope: q.scope });
        const back = new URL(q.redirect_uri);
        back.searchParams.set('code', code);
        back.searchParams.set('state', stub.forgeState ?? q.state ?? '');
        back.searchParams.set('iss', stub.origin);
        res.writeHead(302, { location: back.toString(), 'cache-control': 'no-store' });
        return res.end();
      }
      if (url.pathname === '/token' && req.method === 'POST') {
        const f = Object.fromEntries(new URLSearchParams(body));
        const refuse = (error, description) => {
          stub.tokenRequests.push({ ...f, answer: error });
          json(400, { error, error_description: description });
        };
        const answer = (grant) => {
          const now = Math.floor(Date.now() / 1000);
          const token = jwt({ iss: stub.origin, sub: grant.user.sub, aud: stub.audience, iat: now, nbf: now - 5, exp: now + stub.expiresIn, scope: grant.scope, realm_access: { roles: grant.user.roles } });
          stub.issued.push(token);
          stub.tokenRequests.push({ ...f, answer: 'ok' });
          const out = { access_token: token, token_type: 'Bearer', expires_in: stub.expiresIn, scope: grant.scope };
          if (stub.refreshTokens) {
            out.refresh_token = b64url(randomBytes(32));
            refreshTokens.set(out.refresh_token, { clientId: grant.clientId, user: grant.user, scope: grant.scope });
          }
          return json(200, out);
        };
        if (f.grant_type === 'refresh_token') {
          const grant = refreshTokens.get(f.refresh_token);
          refreshTokens.delete(f.refresh_token);
          if (!grant) return refuse('invalid_grant', 'unknown, used or revoked refresh token');
          if (f.client_id !== grant.clientId) return refuse('invalid_client', 'the refresh token was issued to another client');
          return answer(grant);
        }
        const grant = codes.get(f.code);
        codes.delete(f.code);
        if (f.grant_type !== 'authorization_code') return refuse('unsupported_grant_type', 'authorization_code or refresh_token only');
        if (!grant) return refuse('invalid_grant', 'unknown or used code');
        if (f.client_id !== grant.clientId) return refuse('invalid_client', 'the code was issued to another client');
        if (f.redirect_uri !== grant.redirectUri) return refuse('invalid_grant', 'redirect_uri differs');
        const challenge = createHash('sha256').update(f.code_verifier ?? '').digest('base64url');
        if (challenge !== grant.challenge) return refuse('invalid_grant', 'PKCE verification failed');
        return answer(grant);
      }
      json(404, { error: 'not_found' });
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      stub.origin = `http://127.0.0.1:${server.address().port}`;
      stub.close = () => server.close();
      resolve(stub);
    });
  });
}
