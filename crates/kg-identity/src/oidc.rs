//! The identity provider's signing keys: OpenID Connect discovery, the JWKS, and its cache
//! in the key-value store (shared by every instance of the component, so a cold instance
//! does not fetch them again).
//!
//! The cached value (`auth/jwks/<first 16 hex of sha256(issuer)>`) is JSON
//! `{fetched_at, attempted_at, jwks_uri, keys}`. A set younger than `oidc_jwks_ttl_s` is
//! used as is. A token whose key is not in the set makes us refetch it (without discovery:
//! the `jwks_uri` is cached), and so does a set past its TTL; the new set replaces the old
//! one, so a key the provider removed is refused from then on. Every fetch is at most once
//! per 30 s per issuer (`attempted_at`, success or not): made-up key ids cannot make us
//! hammer the provider. When fetching fails, the cached set is used however old it is; with
//! none, authentication is unavailable (503).

use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, PublicKeyUse};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::config::{OidcConfig, is_http_url};
use crate::error::AuthError;

/// HTTP GET, provided by the host (Spin's outbound HTTP in the component).
pub trait Fetch {
    /// HTTP GET; Ok((status, body)). Err = could not connect.
    fn get(&self, url: &str) -> Result<(u16, Vec<u8>), String>;
}

/// A key-value store shared by the component's instances (Spin's key-value store).
pub trait Store {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, String>;
    fn set(&self, key: &str, value: &[u8]) -> Result<(), String>;
}

/// Fetches of the provider's documents are at most this often per issuer.
pub const MIN_REFETCH_INTERVAL_S: i64 = 30;
/// Discovery documents and key sets are small; a bigger answer is not one.
const MAX_DOCUMENT_BYTES: usize = 1024 * 1024;

#[derive(Debug, Clone, Serialize, Deserialize)]
struct CachedKeys {
    /// When `keys` were fetched (Unix seconds).
    fetched_at: i64,
    /// When a fetch was last tried, successful or not.
    attempted_at: i64,
    jwks_uri: String,
    keys: Vec<Jwk>,
}

/// The store key of an issuer's cached keys.
pub fn cache_key(issuer: &str) -> String {
    let digest = Sha256::digest(issuer.as_bytes());
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("auth/jwks/{hex}")
}

/// The provider's signing keys. `lacks_key` tells whether a set lacks the key the token
/// needs; then the set is refetched (at most once per 30 s).
pub(crate) fn signing_keys(
    oidc: &OidcConfig,
    fetch: &dyn Fetch,
    store: &dyn Store,
    now: i64,
    lacks_key: &dyn Fn(&[Jwk]) -> bool,
) -> Result<Vec<Jwk>, AuthError> {
    let store_key = cache_key(&oidc.issuer);
    // A store that cannot be read is treated as empty: fetching still works.
    let cached: Option<CachedKeys> = store
        .get(&store_key)
        .ok()
        .flatten()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        // A configured jwks_uri that changed makes the cached keys someone else's.
        .filter(|c: &CachedKeys| oidc.jwks_uri.as_ref().is_none_or(|uri| *uri == c.jwks_uri));

    let Some(mut cached) = cached else {
        let fetched = fetch_keys(oidc, fetch, None).map_err(|why| {
            AuthError::Unavailable(format!(
                "cannot fetch the identity provider's signing keys: {why}"
            ))
        })?;
        save(
            store,
            &store_key,
            &CachedKeys {
                fetched_at: now,
                attempted_at: now,
                jwks_uri: fetched.0,
                keys: fetched.1.clone(),
            },
        );
        return Ok(fetched.1);
    };

    let age = now.saturating_sub(cached.fetched_at);
    // A timestamp in the future (a clock set back) counts as stale rather than fresh forever.
    let fresh = (0..i64::try_from(oidc.jwks_ttl_s).unwrap_or(i64::MAX)).contains(&age);
    if fresh && !lacks_key(&cached.keys) {
        return Ok(cached.keys);
    }
    let since_attempt = now.saturating_sub(cached.attempted_at);
    if (0..MIN_REFETCH_INTERVAL_S).contains(&since_attempt) {
        return Ok(cached.keys);
    }
    // Past the TTL, discovery runs again (the provider may have moved its JWKS); for a
    // missing key only the JWKS is refetched.
    let known_uri = if fresh {
        Some(cached.jwks_uri.as_str())
    } else {
        None
    };
    match fetch_keys(oidc, fetch, known_uri) {
        Ok((jwks_uri, keys)) => {
            let fresh_set = CachedKeys {
                fetched_at: now,
                attempted_at: now,
                jwks_uri,
                keys,
            };
            save(store, &store_key, &fresh_set);
            Ok(fresh_set.keys)
        }
        Err(_) => {
            // Keep verifying with what we have; remember the attempt so a provider that is
            // down is not asked again on every request.
            cached.attempted_at = now;
            save(store, &store_key, &cached);
            Ok(cached.keys)
        }
    }
}

fn save(store: &dyn Store, key: &str, value: &CachedKeys) {
    // Caching is an optimisation: a store that refuses the write must not fail the request.
    if let Ok(bytes) = serde_json::to_vec(value) {
        let _ = store.set(key, &bytes);
    }
}

/// The JWKS URI (configured, `known`, or discovered) and its usable signing keys.
fn fetch_keys(
    oidc: &OidcConfig,
    fetch: &dyn Fetch,
    known: Option<&str>,
) -> Result<(String, Vec<Jwk>), String> {
    let jwks_uri = match (&oidc.jwks_uri, known) {
        (Some(configured), _) => configured.clone(),
        (None, Some(known)) => known.to_string(),
        (None, None) => discover(oidc, fetch)?,
    };
    let keys = parse_jwks(&get_json(fetch, &jwks_uri)?)?;
    Ok((jwks_uri, keys))
}

/// Whether the `iss` a provider writes is the configured issuer, tolerating one trailing slash
/// on either side.
pub(crate) fn issuer_matches(configured: &str, written: &str) -> bool {
    issuer_variants(configured).iter().any(|v| v == written)
}

/// The configured issuer with and without one trailing slash.
pub(crate) fn issuer_variants(configured: &str) -> [String; 2] {
    match configured.strip_suffix('/') {
        Some(bare) => [configured.to_string(), bare.to_string()],
        None => [configured.to_string(), format!("{configured}/")],
    }
}

/// The `jwks_uri` of the provider's discovery document.
fn discover(oidc: &OidcConfig, fetch: &dyn Fetch) -> Result<String, String> {
    let base = oidc.issuer.strip_suffix('/').unwrap_or(&oidc.issuer);
    let url = format!("{base}/.well-known/openid-configuration");
    let doc = get_json(fetch, &url)?;
    let issuer = doc.get("issuer").and_then(Value::as_str).unwrap_or("");
    if !issuer_matches(&oidc.issuer, issuer) {
        return Err(format!(
            "the discovery document at {url} names issuer `{}`, not oidc_issuer",
            issuer
                .chars()
                .filter(|c| !c.is_control())
                .take(200)
                .collect::<String>()
        ));
    }
    match doc.get("jwks_uri").and_then(Value::as_str) {
        Some(uri) if is_http_url(uri) => Ok(uri.to_string()),
        _ => Err(format!(
            "the discovery document at {url} has no http(s) jwks_uri"
        )),
    }
}

fn get_json(fetch: &dyn Fetch, url: &str) -> Result<Value, String> {
    let (status, body) = fetch.get(url).map_err(|e| format!("GET {url}: {e}"))?;
    if status != 200 {
        return Err(format!("GET {url}: HTTP {status}"));
    }
    if body.len() > MAX_DOCUMENT_BYTES {
        return Err(format!("GET {url}: the answer is over 1 MiB"));
    }
    serde_json::from_slice(&body).map_err(|_| format!("GET {url}: not JSON"))
}

/// The signing keys of a JWKS document. Keys we cannot use are skipped rather than failing
/// the set (providers publish encryption keys and new key types next to the signing keys);
/// symmetric (`oct`) keys are never taken from a JWKS.
fn parse_jwks(doc: &Value) -> Result<Vec<Jwk>, String> {
    let Some(items) = doc.get("keys").and_then(Value::as_array) else {
        return Err("the JWKS has no `keys` array".into());
    };
    let keys: Vec<Jwk> = items
        .iter()
        .filter_map(|item| serde_json::from_value::<Jwk>(item.clone()).ok())
        .filter(|jwk| {
            !matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption))
                && matches!(
                    jwk.algorithm,
                    AlgorithmParameters::RSA(_)
                        | AlgorithmParameters::EllipticCurve(_)
                        | AlgorithmParameters::OctetKeyPair(_)
                )
        })
        .collect();
    if keys.is_empty() {
        return Err("the JWKS has no usable signing key".into());
    }
    Ok(keys)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn issuer_with_and_without_one_trailing_slash() {
        assert!(issuer_matches(
            "https://kc/realms/a",
            "https://kc/realms/a/"
        ));
        assert!(issuer_matches(
            "https://kc/realms/a/",
            "https://kc/realms/a"
        ));
        assert!(issuer_matches("https://kc/realms/a", "https://kc/realms/a"));
        assert!(!issuer_matches(
            "https://kc/realms/a",
            "https://kc/realms/a//"
        ));
        assert!(!issuer_matches(
            "https://kc/realms/a",
            "https://kc/realms/ab"
        ));
    }

    #[test]
    fn the_jwks_keeps_signing_keys_only() {
        let doc = json!({"keys": [
            {"kty": "oct", "k": "c2VjcmV0", "kid": "sym"},
            {"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", "kid": "ed"},
            {"kty": "RSA", "use": "enc", "n": "AQAB", "e": "AQAB", "kid": "enc"},
            {"kty": "EC", "crv": "secp256k1", "x": "AA", "y": "AA", "kid": "k1"},
            "garbage",
        ]});
        let keys = parse_jwks(&doc).unwrap();
        assert_eq!(keys.len(), 1);
        assert_eq!(keys[0].common.key_id.as_deref(), Some("ed"));
        assert!(parse_jwks(&json!({"keys": []})).is_err());
        assert!(parse_jwks(&json!([1])).is_err());
    }

    #[test]
    fn cache_keys_are_short_and_per_issuer() {
        let a = cache_key("https://kc/realms/a");
        assert_eq!(a.len(), "auth/jwks/".len() + 16);
        assert_ne!(a, cache_key("https://kc/realms/b"));
    }
}
