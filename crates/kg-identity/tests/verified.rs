//! A token that passed verification is remembered for a minute at most (per subject), so
//! reusing it skips the signature check; anything else about it still has to hold.
#![cfg(feature = "authn")] // These test authentication, which the feature gates.

mod common;

use common::*;
use kg_identity::oidc::cache_key;
use kg_identity::{AuthConfig, AuthError, OidcConfig, authenticate};
use serde_json::json;

fn check(
    provider: &Provider,
    store: &MemStore,
    config: &AuthConfig,
    token: &str,
    at: i64,
) -> Result<kg_identity::Identity, AuthError> {
    authenticate(Some(&bearer(token)), config, provider, store, at)
}

/// The provider goes away and its keys are forgotten: from now on only a remembered
/// token can pass.
fn lose_the_keys(provider: &Provider, store: &MemStore) {
    provider.down.set(true);
    store.0.borrow_mut().remove(&cache_key(ISSUER));
}

#[test]
fn a_reused_token_skips_verification_for_a_minute_at_most() {
    let (key, provider, store) = (TestKey::ec("k1"), Provider::new(), MemStore::default());
    provider.publish(&[&key]);
    let config = oidc_only(oidc_config());
    let token = key.sign(&claims("alice", &["operator"]));
    let t = now();
    let first = check(&provider, &store, &config, &token, t).unwrap();
    lose_the_keys(&provider, &store);
    let calls = provider.total();
    let again = check(&provider, &store, &config, &token, t + 59).unwrap();
    assert_eq!(again, first, "recalled without the keys");
    assert_eq!(provider.total(), calls, "and without asking the provider");
    assert!(
        matches!(
            check(&provider, &store, &config, &token, t + 60),
            Err(AuthError::Unavailable(_))
        ),
        "after a minute it must be verified again"
    );
}

#[test]
fn only_the_exact_token_under_the_same_settings_is_recalled() {
    let (key, provider, store) = (TestKey::rsa("k1"), Provider::new(), MemStore::default());
    provider.publish(&[&key]);
    let config = oidc_only(oidc_config());
    let token = key.sign(&claims("alice", &["operator"]));
    let t = now();
    check(&provider, &store, &config, &token, t).unwrap();
    // Without the keys, whatever is not recalled fails: each refusal below shows that the
    // token was not taken from memory.
    lose_the_keys(&provider, &store);

    // Another token of the same subject (other claims) is not the remembered one.
    let mut more = claims("alice", &["admin"]);
    more["jti"] = json!("second");
    let other = key.sign(&more);
    assert!(check(&provider, &store, &config, &other, t + 1).is_err());
    // A forgery naming the same subject, signed by a key the provider never published.
    let forged = TestKey::ec("k1").sign(&claims("alice", &["admin"]));
    assert!(check(&provider, &store, &config, &forged, t + 1).is_err());
    // An unsigned token naming the same subject.
    assert!(
        check(
            &provider,
            &store,
            &config,
            &unsigned_token(&claims("alice", &["admin"])),
            t + 1
        )
        .is_err()
    );
    // Changed settings (another audience) are not the ones it was verified under.
    let stricter = oidc_only(OidcConfig {
        audiences: vec!["another-api".into()],
        ..oidc_config()
    });
    assert!(check(&provider, &store, &stricter, &token, t + 1).is_err());
    // The exact token, same settings: still remembered.
    assert!(check(&provider, &store, &config, &token, t + 1).is_ok());
}

#[test]
fn a_token_is_never_remembered_past_its_expiry() {
    let (key, provider, store) = (TestKey::ed("k1"), Provider::new(), MemStore::default());
    provider.publish(&[&key]);
    let config = oidc_only(oidc_config());
    let t = now();
    let mut short = claims("bob", &["viewer"]);
    short["exp"] = json!(t + 10);
    let token = key.sign(&short);
    check(&provider, &store, &config, &token, t).unwrap();
    lose_the_keys(&provider, &store);
    assert!(check(&provider, &store, &config, &token, t + 9).is_ok());
    assert!(check(&provider, &store, &config, &token, t + 10).is_err());
    // One entry per subject, whatever the number of tokens.
    let entries = store
        .0
        .borrow()
        .keys()
        .filter(|k| k.starts_with("auth/verified/"))
        .count();
    assert_eq!(entries, 1);
}
