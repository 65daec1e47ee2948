//! JWT verification with real keys: every accepted algorithm, every way a token is refused.
#![cfg(feature = "authn")] // These test authentication, which the feature gates.

mod common;

use common::*;
use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
use kg_identity::{AuthConfig, AuthError, AuthMethod, Identity, OidcConfig, Role, authenticate};
use serde_json::{Value, json};

/// A provider publishing one key of each algorithm.
struct Setup {
    rsa: TestKey,
    ec: TestKey,
    ed: TestKey,
    provider: Provider,
    store: MemStore,
}

fn setup() -> Setup {
    let (rsa, ec, ed) = (
        TestKey::rsa("rsa-1"),
        TestKey::ec("ec-1"),
        TestKey::ed("ed-1"),
    );
    let provider = Provider::new();
    provider.publish(&[&rsa, &ec, &ed]);
    Setup {
        rsa,
        ec,
        ed,
        provider,
        store: MemStore::default(),
    }
}

impl Setup {
    fn check_with(&self, config: &AuthConfig, token: &str) -> Result<Identity, AuthError> {
        authenticate(
            Some(&bearer(token)),
            config,
            &self.provider,
            &self.store,
            now(),
        )
    }

    fn check(&self, token: &str) -> Result<Identity, AuthError> {
        self.check_with(&oidc_only(oidc_config()), token)
    }
}

#[track_caller]
fn refused(result: Result<Identity, AuthError>, why: &str) {
    match result {
        Err(AuthError::InvalidToken(message)) => {
            assert!(message.contains(why), "expected `{why}` in `{message}`")
        }
        other => panic!("expected InvalidToken({why}), got {other:?}"),
    }
}

#[test]
fn a_valid_token_of_each_algorithm_is_accepted() {
    let s = setup();
    for key in [&s.rsa, &s.ec, &s.ed] {
        let token = key.sign(&claims(
            "alice",
            &["operator", "approver", "offline_access"],
        ));
        let identity = s
            .check(&token)
            .unwrap_or_else(|e| panic!("{:?}: {e:?}", key.alg));
        assert_eq!(
            identity,
            Identity {
                subject: "alice".into(),
                roles: vec![Role::Operator, Role::Approver],
                method: AuthMethod::Jwt
            }
        );
    }
}

#[test]
fn roles_come_from_the_configured_claim() {
    let s = setup();
    let mut c = claims("bob", &[]);
    c["realm_access"] = json!({"roles": ["admin", "uma_authorization"]});
    c["groups"] = json!(["viewer", "staff"]);
    c["scope"] = json!("openid email approver");
    c["email"] = json!("bob@example.com");
    let token = s.ec.sign(&c);
    for (claim, role) in [
        ("realm_access.roles", Role::Admin),
        ("groups", Role::Viewer),
        ("scope", Role::Approver),
    ] {
        let config = oidc_only(OidcConfig {
            roles_claim: claim.into(),
            ..oidc_config()
        });
        assert_eq!(
            s.check_with(&config, &token).unwrap().roles,
            vec![role],
            "{claim}"
        );
    }
    // Another subject claim.
    let config = oidc_only(OidcConfig {
        subject_claim: "email".into(),
        ..oidc_config()
    });
    assert_eq!(
        s.check_with(&config, &token).unwrap().subject,
        "bob@example.com"
    );
    // None of our roles: authenticated, with no roles (the permission check answers 403).
    let identity = s.check(&token).unwrap();
    assert!(identity.roles.is_empty());
}

#[test]
fn expiry_and_not_before_allow_the_clock_skew_only() {
    let s = setup();
    let with = |field: &str, offset: i64| {
        let mut c = claims("alice", &["viewer"]);
        c[field] = json!(now() + offset);
        s.ec.sign(&c)
    };
    refused(s.check(&with("exp", -120)), "expired");
    assert!(s.check(&with("exp", -30)).is_ok(), "within the 60 s skew");
    refused(s.check(&with("nbf", 600)), "not valid yet");
    assert!(s.check(&with("nbf", 30)).is_ok(), "within the 60 s skew");
    let strict = oidc_only(OidcConfig {
        clock_skew_s: 0,
        ..oidc_config()
    });
    refused(s.check_with(&strict, &with("exp", -30)), "expired");
}

#[test]
fn required_claims() {
    let s = setup();
    for (claim, why) in [
        ("exp", "`exp`"),
        ("iss", "`iss`"),
        ("aud", "`aud`"),
        ("sub", "`sub`"),
    ] {
        let mut c = claims("alice", &["viewer"]);
        c.as_object_mut().unwrap().remove(claim);
        refused(s.check(&s.rsa.sign(&c)), why);
    }
    let mut c = claims("alice", &["viewer"]);
    c["sub"] = json!("");
    refused(s.check(&s.rsa.sign(&c)), "`sub`");
    c["sub"] = json!(42);
    refused(s.check(&s.rsa.sign(&c)), "`sub`");
    c = claims("alice", &["viewer"]);
    c["exp"] = json!("tomorrow");
    refused(s.check(&s.rsa.sign(&c)), "exp");
}

#[test]
fn issuer_and_audience() {
    let s = setup();
    let with = |field: &str, value: Value| {
        let mut c = claims("alice", &["viewer"]);
        c[field] = value;
        s.ed.sign(&c)
    };
    refused(
        s.check(&with("iss", json!("https://evil.example.com/realms/acme"))),
        "issuer",
    );
    refused(
        s.check(&with("iss", json!("https://kc.example.com/realms/acme2"))),
        "issuer",
    );
    assert!(
        s.check(&with("iss", json!(format!("{ISSUER}/")))).is_ok(),
        "one trailing slash"
    );
    refused(s.check(&with("aud", json!("other-app"))), "audience");
    refused(
        s.check(&with("aud", json!(["other-app", "account"]))),
        "audience",
    );
    assert!(s.check(&with("aud", json!(["account", AUDIENCE]))).is_ok());
    // Any of several configured audiences.
    let two = oidc_only(OidcConfig {
        audiences: vec!["x".into(), "other-app".into()],
        ..oidc_config()
    });
    assert!(s.check_with(&two, &with("aud", json!("other-app"))).is_ok());
    // A configured issuer with a trailing slash accepts the provider's form without.
    let slash = oidc_only(OidcConfig {
        issuer: format!("{ISSUER}/"),
        ..oidc_config()
    });
    assert!(
        s.check_with(&slash, &s.ed.sign(&claims("alice", &[])))
            .is_ok()
    );
}

#[test]
fn alg_none_is_refused() {
    let s = setup();
    refused(
        s.check(&unsigned_token(&claims("mallory", &["admin"]))),
        "malformed",
    );
    // Even with an HMAC secret configured, and with a signature part attached.
    let hs = oidc_only(OidcConfig {
        hs_secret: Some(HS_SECRET.into()),
        ..oidc_config()
    });
    let token = format!(
        "{}{}",
        unsigned_token(&claims("mallory", &["admin"])),
        b64(b"sig")
    );
    refused(s.check_with(&hs, &token), "malformed");
    for alg in ["None", "NONE", ""] {
        let header = json!({"alg": alg, "kid": "rsa-1"}).to_string();
        let payload = claims("mallory", &["admin"]).to_string();
        let token = format!("{}.{}.", b64(header.as_bytes()), b64(payload.as_bytes()));
        refused(s.check(&token), "malformed");
    }
}

#[test]
fn hmac_tokens_need_the_configured_secret() {
    let s = setup();
    let sign = |secret: &[u8], alg: Algorithm| {
        encode(
            &Header::new(alg),
            &claims("svc", &["viewer"]),
            &EncodingKey::from_secret(secret),
        )
        .unwrap()
    };
    let token = sign(HS_SECRET.as_bytes(), Algorithm::HS256);
    refused(s.check(&token), "no oidc_hs_secret");
    let hs = oidc_only(OidcConfig {
        hs_secret: Some(HS_SECRET.into()),
        ..oidc_config()
    });
    assert_eq!(s.check_with(&hs, &token).unwrap().subject, "svc");
    assert!(
        s.check_with(&hs, &sign(HS_SECRET.as_bytes(), Algorithm::HS512))
            .is_ok()
    );
    refused(
        s.check_with(
            &hs,
            &sign(b"another secret of at least 32 bytes...", Algorithm::HS256),
        ),
        "bad signature",
    );
    // No JWKS is needed for HMAC tokens.
    assert_eq!(s.provider.total(), 0);
}

#[test]
fn the_public_key_is_no_hmac_secret() {
    // The classic confusion: an HS256 token "signed" with the provider's public key.
    let s = setup();
    let public = serde_json::to_vec(&s.rsa.jwk).unwrap();
    let mut header = Header::new(Algorithm::HS256);
    header.kid = Some("rsa-1".into());
    let token = encode(
        &header,
        &claims("mallory", &["admin"]),
        &EncodingKey::from_secret(&public),
    )
    .unwrap();
    refused(s.check(&token), "no oidc_hs_secret");
}

#[test]
fn other_algorithms_are_refused() {
    let s = setup();
    let mut header = Header::new(Algorithm::RS512);
    header.kid = Some("rsa-1".into());
    let token = encode(&header, &claims("alice", &[]), &s.rsa.encoding).unwrap();
    refused(s.check(&token), "RS512 is not accepted");
    let mut header = Header::new(Algorithm::PS256);
    header.kid = Some("rsa-1".into());
    let token = encode(&header, &claims("alice", &[]), &s.rsa.encoding).unwrap();
    refused(s.check(&token), "PS256 is not accepted");
}

#[test]
fn a_token_must_fit_its_key() {
    let s = setup();
    // An ES256 token naming the RSA key's kid.
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some("rsa-1".into());
    let token = encode(&header, &claims("alice", &[]), &s.ec.encoding).unwrap();
    refused(s.check(&token), "does not fit");
    // A JWK that names another algorithm than the token's.
    let mut rsa = TestKey::rsa("rsa-ps");
    rsa.jwk.common.key_algorithm = Some(jsonwebtoken::jwk::KeyAlgorithm::PS256);
    let fresh = Setup {
        provider: Provider::new(),
        store: MemStore::default(),
        ..setup()
    };
    fresh.provider.publish(&[&rsa]);
    refused(
        fresh.check(&rsa.sign(&claims("alice", &[]))),
        "does not fit",
    );
}

#[test]
fn keys_the_provider_did_not_publish_are_refused() {
    let s = setup();
    // Same kid as a published key, another key: the signature does not verify.
    let impostor = TestKey::ec("ec-1");
    refused(
        s.check(&impostor.sign(&claims("mallory", &["admin"]))),
        "bad signature",
    );
    let impostor = TestKey::ed("ed-1");
    refused(
        s.check(&impostor.sign(&claims("mallory", &["admin"]))),
        "bad signature",
    );
    // An unknown kid.
    let stranger = TestKey::ec("ec-2");
    refused(
        s.check(&stranger.sign(&claims("mallory", &["admin"]))),
        "kid",
    );
    // A token that embeds its own key is still checked against the provider's.
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some("ec-2".into());
    header.jwk = Some(stranger.jwk.clone());
    let token = encode(&header, &claims("mallory", &["admin"]), &stranger.encoding).unwrap();
    refused(s.check(&token), "kid");
    // A tampered payload.
    let token = s.ec.sign(&claims("alice", &["viewer"]));
    let parts: Vec<&str> = token.split('.').collect();
    let forged = b64(claims("alice", &["admin"]).to_string().as_bytes());
    refused(
        s.check(&format!("{}.{forged}.{}", parts[0], parts[2])),
        "bad signature",
    );
}

#[test]
fn without_a_kid_the_only_fitting_key_is_used() {
    let s = setup();
    // One key of each kind is published: each kind's key is found without a kid.
    for key in [&s.rsa, &s.ec, &s.ed] {
        assert!(
            s.check(&key.sign_without_kid(&claims("alice", &[])))
                .is_ok(),
            "{:?}",
            key.alg
        );
    }
    // Two EC keys: ambiguous.
    let two = Setup {
        provider: Provider::new(),
        store: MemStore::default(),
        ..setup()
    };
    let other = TestKey::ec("ec-9");
    two.provider.publish(&[&two.ec, &other]);
    refused(
        two.check(&two.ec.sign_without_kid(&claims("alice", &[]))),
        "several keys",
    );
}

#[test]
fn critical_header_extensions_are_refused() {
    let s = setup();
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some("ec-1".into());
    header.crit = Some(vec!["exp-ext".into()]);
    let token = encode(&header, &claims("alice", &[]), &s.ec.encoding).unwrap();
    refused(s.check(&token), "crit");
}

#[test]
fn garbage_is_an_invalid_token() {
    let s = setup();
    let hs = oidc_only(OidcConfig {
        hs_secret: Some(HS_SECRET.into()),
        ..oidc_config()
    });
    let valid = s.ec.sign(&claims("alice", &[]));
    let parts: Vec<&str> = valid.split('.').collect();
    let cases = [
        "abc".to_string(),
        "a.b.c".into(),
        "a.b.c.d".into(),
        "...".into(),
        "..".into(),
        "!!!.@@@.###".into(),
        format!("{}.{}", parts[0], parts[1]),
        format!("{}.{}.{}.", parts[0], parts[1], parts[2]),
        format!("{}.{}.!!notbase64", parts[0], parts[1]),
        format!("{}.!!notbase64.{}", parts[0], parts[2]),
        format!("{}.{}.", b64(b"{}"), b64(b"{}")),
        format!("{}.{}.{}", b64(b"[1,2]"), parts[1], parts[2]),
        format!("{}.{}.{}", parts[0], b64(b"not json"), parts[2]),
        format!("{}.{}.{}", parts[0], b64(b"[]"), parts[2]),
        format!(
            "{}.{}.{}",
            b64(br#"{"alg":"ES256","kid":7}"#),
            parts[1],
            parts[2]
        ),
        format!(
            "{}.{}.{}",
            b64(br#"{"alg":"HS256"}"#),
            b64(b"\xff\xfe"),
            parts[2]
        ),
        format!("{}.{}.", parts[0], parts[1]),
        "eyJhbGciOiJFUzI1NiJ9".into(),
    ];
    for token in &cases {
        for config in [oidc_only(oidc_config()), hs.clone()] {
            match s.check_with(&config, token) {
                Err(AuthError::InvalidToken(_)) => {}
                other => panic!("{token}: {other:?}"),
            }
        }
    }
}

#[test]
fn the_provider_s_keys_are_fetched_for_the_first_token_only() {
    let s = setup();
    for _ in 0..3 {
        assert!(s.check(&s.rsa.sign(&claims("alice", &[]))).is_ok());
    }
    assert_eq!(
        (s.provider.count(DISCOVERY), s.provider.count(JWKS_URI)),
        (1, 1)
    );
}
