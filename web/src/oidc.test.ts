import { describe, expect, it } from 'vitest';
import { audienceParams, base64url, checkCallback, codeChallenge, isCallback, randomString, SignInError } from './oidc';

const pending = { state: 'st-123', issuer: 'https://id.example.com' };
const code = (query: string) => checkCallback(new URLSearchParams(query), pending);
const refusal = (query: string, p: typeof pending | null = pending): string => {
  try {
    checkCallback(new URLSearchParams(query), p);
  } catch (e) {
    expect(e).toBeInstanceOf(SignInError);
    return (e as SignInError).code;
  }
  throw new Error(`accepted: ${query}`);
};

describe('PKCE (RFC 7636)', () => {
  it('computes the S256 challenge of the RFC 7636 appendix B example', async () => {
    const verifier = base64url(
      new Uint8Array([116, 24, 223, 180, 151, 153, 224, 37, 79, 250, 96, 125, 216, 173, 187, 186, 22, 212, 37, 77, 105, 214, 191, 240, 91, 88, 5, 88, 83, 132, 141, 121]),
    );
    expect(verifier).toBe('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk');
    expect(await codeChallenge(verifier)).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
  });

  it('makes verifiers and states of 43 unreserved characters, never twice the same', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const v = randomString();
      expect(v).toMatch(/^[A-Za-z0-9_-]{43}$/);
      seen.add(v);
    }
    expect(seen.size).toBe(200);
  });

  it('encodes base64url without padding', () => {
    expect(base64url(new Uint8Array([]))).toBe('');
    expect(base64url(new Uint8Array([0xfb, 0xff]))).toBe('-_8');
    expect(base64url(new Uint8Array([1, 2, 3, 4]))).toBe('AQIDBA');
  });
});

describe('the redirect back from the provider', () => {
  it('takes the code when the state matches', () => {
    expect(code('code=abc&state=st-123')).toBe('abc');
    expect(code('code=abc&state=st-123&iss=https%3A%2F%2Fid.example.com')).toBe('abc');
  });

  it('refuses a wrong, missing or unexpected state, and another issuer', () => {
    expect(refusal('code=abc&state=st-999')).toBe('state_mismatch');
    expect(refusal('code=abc')).toBe('state_mismatch');
    expect(refusal('code=abc&state=')).toBe('state_mismatch');
    expect(refusal('code=abc&state=st-123', null)).toBe('no_pending');
    expect(refusal('code=abc&state=st-123&iss=https%3A%2F%2Fevil.example')).toBe('issuer_mismatch');
  });

  it("reports the provider's error, but only for this tab's request", () => {
    expect(refusal('error=access_denied&error_description=no&state=st-123')).toBe('provider');
    expect(refusal('error=access_denied&state=other')).toBe('state_mismatch');
    expect(refusal('state=st-123')).toBe('provider');
  });

  it('recognises a callback address', () => {
    expect(isCallback('?code=a&state=b')).toBe(true);
    expect(isCallback('?error=x&state=b')).toBe(true);
    expect(isCallback('?code=a')).toBe(false);
    expect(isCallback('')).toBe(false);
  });
});

describe('audience parameters', () => {
  it('sends audience, and resource (RFC 8707) only for an absolute URI', () => {
    expect(audienceParams(undefined)).toEqual([]);
    expect(audienceParams('')).toEqual([]);
    expect(audienceParams('kg-agent')).toEqual([['audience', 'kg-agent']]);
    expect(audienceParams('https://api.example.com/kg')).toEqual([
      ['audience', 'https://api.example.com/kg'],
      ['resource', 'https://api.example.com/kg'],
    ]);
    expect(audienceParams('https://api.example.com/#frag')).toEqual([['audience', 'https://api.example.com/#frag']]);
  });
});
