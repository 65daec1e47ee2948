//! `authenticate`: the mode, the credential's kind, and never a panic.
#![cfg(feature = "authn")] // These test authentication, which the feature gates.

mod common;

use common::*;
use kg_identity::{
    AuthConfig, AuthError, AuthMethod, Identity, Role, authenticate, bearer_token, hash_key,
    parse_entries,
};
use proptest::prelude::*;

const KEY: &str = "kga_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG";

fn both() -> AuthConfig {
    AuthConfig {
        api_keys: Some(parse_entries(&format!("alice|operator|{}", hash_key(KEY))).unwrap()),
        oidc: Some(oidc_config()),
        anonymous: false,
    }
}

fn run(
    header: Option<&str>,
    config: &AuthConfig,
    provider: &Provider,
) -> Result<Identity, AuthError> {
    authenticate(header, config, provider, &MemStore::default(), now())
}

#[test]
fn none_mode_is_an_anonymous_admin_without_any_header() {
    let config = AuthConfig {
        api_keys: None,
        oidc: None,
        anonymous: true,
    };
    let provider = Provider::new();
    for header in [None, Some("garbage"), Some("Bearer x")] {
        let identity = run(header, &config, &provider).unwrap();
        assert_eq!(identity.subject, "anonymous");
        assert_eq!(identity.roles, Role::ALL.to_vec());
        assert_eq!(identity.method, AuthMethod::Anonymous);
    }
}

#[test]
fn api_keys_and_tokens_take_their_own_paths() {
    let provider = Provider::new();
    let key = TestKey::ec("k1");
    provider.publish(&[&key]);
    let token = key.sign(&claims("bob", &["viewer"]));

    let identity = run(Some(&bearer(KEY)), &both(), &provider).unwrap();
    assert_eq!(
        (identity.subject.as_str(), identity.method),
        ("alice", AuthMethod::ApiKey)
    );
    let identity = run(Some(&bearer(&token)), &both(), &provider).unwrap();
    assert_eq!(
        (identity.subject.as_str(), identity.method),
        ("bob", AuthMethod::Jwt)
    );

    let keys_only = AuthConfig {
        oidc: None,
        ..both()
    };
    assert_eq!(
        run(Some(&bearer(&token)), &keys_only, &provider),
        Err(AuthError::InvalidToken(
            "OpenID Connect tokens are not enabled".into()
        ))
    );
    let oidc_only = AuthConfig {
        api_keys: None,
        ..both()
    };
    assert_eq!(
        run(Some(&bearer(KEY)), &oidc_only, &provider),
        Err(AuthError::InvalidToken("API keys are not enabled".into()))
    );
    // A key is never sent to the identity provider.
    assert_eq!(
        run(
            Some(&bearer("kga_unknown_key_xxxxxxxxxxxxxx")),
            &both(),
            &provider
        ),
        Err(AuthError::InvalidToken("unknown API key".into()))
    );
    assert_eq!(provider.total(), 1 + 1);
}

#[test]
fn missing_and_malformed_headers() {
    let provider = Provider::new();
    assert_eq!(run(None, &both(), &provider), Err(AuthError::Missing));
    assert_eq!(
        run(Some("Basic YWxpY2U6cHc="), &both(), &provider),
        Err(AuthError::Missing)
    );
    assert!(matches!(
        run(Some("Bearer "), &both(), &provider),
        Err(AuthError::InvalidToken(_))
    ));
    assert_eq!(
        run(Some(&format!("bearer {KEY}")), &both(), &provider)
            .unwrap()
            .subject,
        "alice"
    );
    assert_eq!(bearer_token(Some(&format!("Bearer  {KEY}"))), Ok(KEY));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Arbitrary headers never panic and never authenticate.
    #[test]
    fn arbitrary_headers_never_panic(header in prop_oneof![
        any::<String>(),
        "Bearer .{0,300}",
        "[Bb][Ee][Aa][Rr][Ee][Rr] +kga_[A-Za-z0-9_-]{0,220}",
        "Bearer ey[A-Za-z0-9_-]{0,80}\\.[A-Za-z0-9_-]{0,80}\\.[A-Za-z0-9_-]{0,80}",
        "Bearer [A-Za-z0-9_=+/.-]{0,200}",
    ]) {
        let provider = Provider::new();
        let key = TestKey::ed("k1");
        provider.publish(&[&key]);
        let _ = bearer_token(Some(&header));
        prop_assert!(run(Some(&header), &both(), &provider).is_err());
    }

    /// A real token's header with an arbitrary payload or signature never panics.
    #[test]
    fn arbitrary_payloads_never_panic(payload in any::<Vec<u8>>(), signature in any::<Vec<u8>>()) {
        let provider = Provider::new();
        let key = TestKey::ed("k1");
        provider.publish(&[&key]);
        let token = key.sign(&claims("alice", &[]));
        let header_part = token.split('.').next().unwrap_or_default();
        let forged = format!("Bearer {header_part}.{}.{}", b64(&payload), b64(&signature));
        prop_assert!(run(Some(&forged), &both(), &provider).is_err());
    }
}
