//! The provider's keys: discovery, the JWKS cache in the store, refetching on an unknown
//! key (at most once per 30 s), rotation, and a provider that is down.
#![cfg(feature = "authn")] // These test authentication, which the feature gates.

mod common;

use common::*;
use kg_identity::oidc::cache_key;
use kg_identity::{AuthError, Identity, OidcConfig, authenticate};
use serde_json::{Value, json};

/// Authenticates `token` with the cache clock at `at` (jsonwebtoken checks `exp` against
/// the wall clock; the cache uses the time it is given).
fn check(
    provider: &Provider,
    store: &dyn kg_identity::Store,
    oidc: &OidcConfig,
    token: &str,
    at: i64,
) -> Result<Identity, AuthError> {
    authenticate(
        Some(&bearer(token)),
        &oidc_only(oidc.clone()),
        provider,
        store,
        at,
    )
}

fn token(key: &TestKey) -> String {
    key.sign(&claims("alice", &["viewer"]))
}

#[track_caller]
fn unknown_kid(result: Result<Identity, AuthError>) {
    match result {
        Err(AuthError::InvalidToken(m)) if m.contains("kid") => {}
        other => panic!("expected an unknown kid, got {other:?}"),
    }
}

const T0: i64 = 1_800_000_000;

#[test]
fn discovery_and_keys_are_fetched_once_and_reused() {
    let (key, provider, store) = (TestKey::ec("k1"), Provider::new(), MemStore::default());
    provider.publish(&[&key]);
    let oidc = oidc_config();
    for i in 0..5 {
        assert!(check(&provider, &store, &oidc, &token(&key), T0 + i * 100).is_ok());
    }
    assert_eq!(
        (provider.count(DISCOVERY), provider.count(JWKS_URI)),
        (1, 1)
    );
    // The cached value: JSON with when, where from, and the keys.
    let cached: Value = serde_json::from_slice(&store.0.borrow()[&cache_key(ISSUER)]).unwrap();
    assert_eq!(cached["fetched_at"], json!(T0));
    assert_eq!(cached["jwks_uri"], json!(JWKS_URI));
    assert_eq!(cached["keys"][0]["kid"], json!("k1"));
    assert!(cache_key(ISSUER).starts_with("auth/jwks/"));
    // Another instance with the same store does not fetch again.
    let other_instance = Provider::new();
    other_instance.publish(&[&key]);
    assert!(check(&other_instance, &store, &oidc, &token(&key), T0 + 600).is_ok());
    assert_eq!(other_instance.total(), 0);
}

#[test]
fn keys_past_their_ttl_are_fetched_again_with_discovery() {
    let (key, provider, store) = (TestKey::ed("k1"), Provider::new(), MemStore::default());
    provider.publish(&[&key]);
    let oidc = OidcConfig {
        jwks_ttl_s: 300,
        ..oidc_config()
    };
    assert!(check(&provider, &store, &oidc, &token(&key), T0).is_ok());
    assert!(check(&provider, &store, &oidc, &token(&key), T0 + 299).is_ok());
    assert_eq!(provider.count(JWKS_URI), 1);
    assert!(check(&provider, &store, &oidc, &token(&key), T0 + 300).is_ok());
    assert_eq!(
        (provider.count(DISCOVERY), provider.count(JWKS_URI)),
        (2, 2)
    );
}

#[test]
fn an_unknown_kid_refetches_at_most_once_per_30_seconds() {
    let (key, provider, store) = (TestKey::ec("k1"), Provider::new(), MemStore::default());
    provider.publish(&[&key]);
    let oidc = oidc_config();
    assert!(check(&provider, &store, &oidc, &token(&key), T0).is_ok());
    let stranger = TestKey::ec("made-up");
    // Within 30 s of the last fetch: refused from the cache, no request.
    unknown_kid(check(&provider, &store, &oidc, &token(&stranger), T0 + 10));
    assert_eq!(provider.total(), 2);
    // Later: one refetch of the JWKS (no discovery: its URI is cached), still unknown.
    unknown_kid(check(&provider, &store, &oidc, &token(&stranger), T0 + 31));
    assert_eq!(
        (provider.count(DISCOVERY), provider.count(JWKS_URI)),
        (1, 2)
    );
    // A burst of made-up kids within the next 30 s fetches nothing.
    for i in 0..20 {
        let garbage = TestKey::ec(&format!("garbage-{i}"));
        unknown_kid(check(
            &provider,
            &store,
            &oidc,
            &token(&garbage),
            T0 + 40 + i,
        ));
    }
    assert_eq!(provider.count(JWKS_URI), 2);
    unknown_kid(check(&provider, &store, &oidc, &token(&stranger), T0 + 62));
    assert_eq!(provider.count(JWKS_URI), 3);
    // Known keys keep working throughout, from the cache.
    assert!(check(&provider, &store, &oidc, &token(&key), T0 + 63).is_ok());
    assert_eq!(provider.total(), 4);
}

#[test]
fn key_rotation() {
    let (old, new, provider, store) = (
        TestKey::rsa("old"),
        TestKey::ec("new"),
        Provider::new(),
        MemStore::default(),
    );
    let oidc = oidc_config();
    provider.publish(&[&old]);
    assert!(check(&provider, &store, &oidc, &token(&old), T0).is_ok());
    // The provider adds a key and signs with it: accepted after the refresh it triggers.
    provider.publish(&[&old, &new]);
    assert!(check(&provider, &store, &oidc, &token(&new), T0 + 40).is_ok());
    assert!(check(&provider, &store, &oidc, &token(&old), T0 + 41).is_ok());
    // The provider removes the old key: once the set is refreshed (here by the TTL), tokens
    // signed with it are refused.
    provider.publish(&[&new]);
    assert!(
        check(&provider, &store, &oidc, &token(&old), T0 + 100).is_ok(),
        "cached until refreshed"
    );
    unknown_kid(check(
        &provider,
        &store,
        &oidc,
        &token(&old),
        T0 + 40 + 3600,
    ));
    assert!(check(&provider, &store, &oidc, &token(&new), T0 + 40 + 3601).is_ok());
    // Or by a refresh that a token with a new kid triggered.
    let newer = TestKey::ed("newer");
    let store2 = MemStore::default();
    provider.publish(&[&old, &new]);
    assert!(check(&provider, &store2, &oidc, &token(&old), T0).is_ok());
    provider.publish(&[&new, &newer]);
    assert!(check(&provider, &store2, &oidc, &token(&newer), T0 + 31).is_ok());
    unknown_kid(check(&provider, &store2, &oidc, &token(&old), T0 + 32));
}

#[test]
fn a_provider_that_is_down_with_no_cached_keys_makes_authentication_unavailable() {
    let (key, provider, store) = (TestKey::ec("k1"), Provider::new(), MemStore::default());
    provider.publish(&[&key]);
    provider.down.set(true);
    let oidc = oidc_config();
    let e = check(&provider, &store, &oidc, &token(&key), T0).unwrap_err();
    assert!(
        matches!(&e, AuthError::Unavailable(m) if m.contains("connection refused")),
        "{e:?}"
    );
    assert_eq!(e.status(), 503);
    // An HTTP error or a body that is no JWKS is the same.
    provider.down.set(false);
    provider.serve(JWKS_URI, 500, json!("oops"));
    assert!(
        matches!(check(&provider, &store, &oidc, &token(&key), T0), Err(AuthError::Unavailable(m)) if m.contains("HTTP 500"))
    );
    provider.serve(JWKS_URI, 200, json!({"keys": []}));
    assert!(matches!(
        check(&provider, &store, &oidc, &token(&key), T0),
        Err(AuthError::Unavailable(_))
    ));
    provider.serve(DISCOVERY, 404, json!({}));
    assert!(
        matches!(check(&provider, &store, &oidc, &token(&key), T0), Err(AuthError::Unavailable(m)) if m.contains("HTTP 404"))
    );
    // Once it is back, it works.
    provider.serve(
        DISCOVERY,
        200,
        json!({"issuer": ISSUER, "jwks_uri": JWKS_URI}),
    );
    provider.publish(&[&key]);
    assert!(check(&provider, &store, &oidc, &token(&key), T0 + 1).is_ok());
}

#[test]
fn a_provider_that_is_down_leaves_the_stale_cache_in_use() {
    let (key, provider, store) = (TestKey::ed("k1"), Provider::new(), MemStore::default());
    provider.publish(&[&key]);
    let oidc = oidc_config();
    assert!(check(&provider, &store, &oidc, &token(&key), T0).is_ok());
    provider.down.set(true);
    let late = T0 + 10 * 3600;
    assert!(
        check(&provider, &store, &oidc, &token(&key), late).is_ok(),
        "stale keys still verify"
    );
    assert_eq!(provider.total(), 3, "one attempt (discovery)");
    // The failed attempt is remembered: the next requests do not try again for 30 s.
    for i in 1..10 {
        assert!(check(&provider, &store, &oidc, &token(&key), late + i).is_ok());
    }
    assert_eq!(provider.total(), 3);
    assert!(check(&provider, &store, &oidc, &token(&key), late + 30).is_ok());
    assert_eq!(provider.total(), 4);
    // Back up: the next attempt refreshes the set.
    provider.down.set(false);
    assert!(check(&provider, &store, &oidc, &token(&key), late + 60).is_ok());
    let cached: Value = serde_json::from_slice(&store.0.borrow()[&cache_key(ISSUER)]).unwrap();
    assert_eq!(cached["fetched_at"], json!(late + 60));
}

#[test]
fn a_broken_store_does_not_fail_authentication() {
    let (key, provider) = (TestKey::ec("k1"), Provider::new());
    provider.publish(&[&key]);
    let oidc = oidc_config();
    for i in 0..3 {
        assert!(check(&provider, &BrokenStore, &oidc, &token(&key), T0 + i).is_ok());
    }
    assert_eq!(
        provider.count(JWKS_URI),
        3,
        "nothing cached, keys fetched each time"
    );
    // A cached value that is not ours is ignored too.
    let store = MemStore::default();
    store
        .0
        .borrow_mut()
        .insert(cache_key(ISSUER), b"not json".to_vec());
    assert!(check(&provider, &store, &oidc, &token(&key), T0).is_ok());
}

#[test]
fn discovery_must_name_the_configured_issuer() {
    let (key, provider, store) = (TestKey::ec("k1"), Provider::new(), MemStore::default());
    provider.publish(&[&key]);
    provider.serve(
        DISCOVERY,
        200,
        json!({"issuer": "https://evil.example.com", "jwks_uri": JWKS_URI}),
    );
    let e = check(&provider, &store, &oidc_config(), &token(&key), T0).unwrap_err();
    assert!(
        matches!(&e, AuthError::Unavailable(m) if m.contains("names issuer")),
        "{e:?}"
    );
    provider.serve(
        DISCOVERY,
        200,
        json!({"issuer": ISSUER, "jwks_uri": "file:///etc/passwd"}),
    );
    let e = check(&provider, &store, &oidc_config(), &token(&key), T0).unwrap_err();
    assert!(
        matches!(&e, AuthError::Unavailable(m) if m.contains("jwks_uri")),
        "{e:?}"
    );
    // The provider writes its issuer with a trailing slash: tolerated.
    provider.serve(
        DISCOVERY,
        200,
        json!({"issuer": format!("{ISSUER}/"), "jwks_uri": JWKS_URI}),
    );
    assert!(check(&provider, &store, &oidc_config(), &token(&key), T0).is_ok());
}

#[test]
fn a_configured_jwks_uri_skips_discovery() {
    let (key, provider, store) = (TestKey::rsa("k1"), Provider::new(), MemStore::default());
    let uri = "https://keys.example.com/jwks.json";
    provider.serve(uri, 200, json!({"keys": [key.jwk]}));
    let oidc = OidcConfig {
        jwks_uri: Some(uri.into()),
        ..oidc_config()
    };
    assert!(check(&provider, &store, &oidc, &token(&key), T0).is_ok());
    assert_eq!((provider.count(DISCOVERY), provider.count(uri)), (0, 1));
    // Keys cached from another URI are not used for this one.
    let elsewhere = OidcConfig {
        jwks_uri: Some("https://other.example.com/jwks".into()),
        ..oidc_config()
    };
    assert!(matches!(
        check(&provider, &store, &elsewhere, &token(&key), T0 + 1),
        Err(AuthError::Unavailable(_))
    ));
}

#[test]
fn a_keycloak_shaped_jwks_is_read() {
    // Keycloak publishes a signing key with its certificate chain and an encryption key of
    // the same kind; Entra ID adds fields of its own and no `alg`.
    let (rsa, ec, provider, store) = (
        TestKey::rsa("sig-1"),
        TestKey::ec("entra-1"),
        Provider::new(),
        MemStore::default(),
    );
    let mut sig = serde_json::to_value(&rsa.jwk).unwrap();
    sig["use"] = json!("sig");
    sig["x5c"] = json!(["MIICnTCCAYUCBgGQ"]);
    sig["x5t"] = json!("q2Jq1YrB0lNlqlTm0sBQ6v0tEvE");
    sig["x5t#S256"] = json!("0yN0qB1l0p4sJ1sYc0f2xKX3bG4zq0P5VYhW9lZLq7w");
    let mut enc = sig.clone();
    enc["kid"] = json!("enc-1");
    enc["use"] = json!("enc");
    enc["alg"] = json!("RSA-OAEP");
    let mut entra = serde_json::to_value(&ec.jwk).unwrap();
    entra.as_object_mut().unwrap().remove("alg");
    entra["issuer"] = json!(ISSUER);
    entra["cloud_instance_name"] = json!("microsoftonline.com");
    let unknown = json!({"kty": "AKP", "alg": "ML-DSA-44", "kid": "pq", "pub": "AAAA"});
    provider.serve(JWKS_URI, 200, json!({"keys": [enc, sig, unknown, entra]}));
    let oidc = oidc_config();
    assert!(check(&provider, &store, &oidc, &token(&rsa), T0).is_ok());
    assert!(check(&provider, &store, &oidc, &token(&ec), T0).is_ok());
    // Without a kid, the encryption key does not make the RSA choice ambiguous.
    let no_kid = rsa.sign_without_kid(&claims("alice", &[]));
    assert!(check(&provider, &store, &oidc, &no_kid, T0).is_ok());
    // A token naming the encryption key's kid is refused.
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256);
    header.kid = Some("enc-1".into());
    let t = jsonwebtoken::encode(&header, &claims("alice", &[]), &rsa.encoding).unwrap();
    assert!(matches!(
        check(&provider, &store, &oidc, &t, T0),
        Err(AuthError::InvalidToken(_))
    ));
}
