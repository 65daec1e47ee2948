//! The authentication configuration from Spin variables: defaults and every error.
#![cfg(feature = "authn")] // These test authentication, which the feature gates.

use std::collections::HashMap;

use kg_identity::{AuthConfig, OidcConfig, Role, hash_key};

fn config(vars: &[(&str, &str)]) -> Result<AuthConfig, String> {
    let vars: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    AuthConfig::from_variables(&|name| vars.get(name).cloned())
}

const OIDC: [(&str, &str); 3] = [
    ("auth_mode", "oidc"),
    ("oidc_issuer", "https://kc.example.com/realms/acme"),
    ("oidc_audience", "kg-agent"),
];

fn oidc_with(extra: &[(&str, &str)]) -> Result<AuthConfig, String> {
    let mut vars = OIDC.to_vec();
    vars.extend_from_slice(extra);
    config(&vars)
}

#[test]
fn api_keys_are_the_default_mode() {
    for vars in [
        &[][..],
        &[("auth_mode", "")],
        &[("auth_mode", "  ")],
        &[("auth_mode", "api_key")],
    ] {
        let c = config(vars).unwrap();
        assert_eq!(c.api_keys, Some(vec![]), "{vars:?}");
        assert_eq!(c.oidc, None);
        assert!(!c.anonymous);
    }
    let entry = format!("alice|admin|{}", hash_key("kga_aaaaaaaaaaaaaaaaaaaaaa"));
    let c = config(&[("auth_api_keys", &entry)]).unwrap();
    assert_eq!(c.api_keys.unwrap()[0].roles, vec![Role::Admin]);
}

#[test]
fn oidc_defaults() {
    let c = oidc_with(&[]).unwrap();
    assert_eq!(c.api_keys, None);
    assert_eq!(
        c.oidc.unwrap(),
        OidcConfig {
            issuer: "https://kc.example.com/realms/acme".into(),
            audiences: vec!["kg-agent".into()],
            roles_claim: "roles".into(),
            subject_claim: "sub".into(),
            jwks_ttl_s: 3600,
            clock_skew_s: 60,
            hs_secret: None,
            jwks_uri: None,
        }
    );
    let c = oidc_with(&[
        ("auth_mode", " OIDC , api_key "),
        ("oidc_audience", " a, b ,, "),
        ("oidc_roles_claim", "realm_access.roles"),
        ("oidc_subject_claim", "preferred_username"),
        ("oidc_jwks_ttl_s", "600"),
        ("oidc_clock_skew_s", "300"),
        ("oidc_hs_secret", "0123456789abcdef0123456789abcdef"),
        ("oidc_jwks_uri", "http://localhost:8080/jwks"),
    ])
    .unwrap();
    assert_eq!(c.api_keys, Some(vec![]));
    let oidc = c.oidc.unwrap();
    assert_eq!(oidc.audiences, vec!["a", "b"]);
    assert_eq!(
        (oidc.roles_claim.as_str(), oidc.subject_claim.as_str()),
        ("realm_access.roles", "preferred_username")
    );
    assert_eq!((oidc.jwks_ttl_s, oidc.clock_skew_s), (600, 300));
    assert_eq!(oidc.jwks_uri.as_deref(), Some("http://localhost:8080/jwks"));
    // The secret never shows in Debug output.
    assert!(!format!("{oidc:?}").contains("0123456789abcdef"));
    assert!(format!("{oidc:?}").contains("redacted"));
    // Empty values are unset.
    let c = oidc_with(&[
        ("oidc_hs_secret", ""),
        ("oidc_roles_claim", ""),
        ("oidc_jwks_ttl_s", ""),
    ])
    .unwrap();
    let oidc = c.oidc.unwrap();
    assert_eq!(
        (oidc.hs_secret, oidc.roles_claim.as_str(), oidc.jwks_ttl_s),
        (None, "roles", 3600)
    );
}

#[test]
fn none_is_anonymous_and_alone() {
    let c = config(&[("auth_mode", "none")]).unwrap();
    assert!(c.anonymous);
    assert_eq!((c.api_keys, c.oidc), (None, None));
    for mode in ["none,api_key", "oidc, none"] {
        let e = oidc_with(&[("auth_mode", mode)]).unwrap_err();
        assert!(
            e.starts_with("auth_mode:") && e.contains("cannot be combined"),
            "{e}"
        );
    }
}

#[test]
fn every_error_names_its_variable() {
    // (extra variables, the variable the error names, what it says)
    type Case<'a> = (&'a [(&'a str, &'a str)], &'a str, &'a str);
    let cases: &[Case] = &[
        (&[("auth_mode", "ldap")], "auth_mode", "unknown mode `ldap`"),
        (&[("auth_mode", ",")], "auth_mode", "no mode"),
        (
            &[("auth_api_keys", "alice|root|00")],
            "auth_api_keys",
            "entry 1",
        ),
        (&[("oidc_issuer", "")], "oidc_issuer", "required"),
        (
            &[("oidc_issuer", "kc.example.com/realms/acme")],
            "oidc_issuer",
            "http(s) URL",
        ),
        (&[("oidc_issuer", "https://")], "oidc_issuer", "http(s) URL"),
        (&[("oidc_audience", " , ")], "oidc_audience", "required"),
        (&[("oidc_jwks_ttl_s", "1h")], "oidc_jwks_ttl_s", "`1h`"),
        (
            &[("oidc_jwks_ttl_s", "-5")],
            "oidc_jwks_ttl_s",
            "whole number",
        ),
        (
            &[("oidc_clock_skew_s", "x")],
            "oidc_clock_skew_s",
            "whole number",
        ),
        (
            &[("oidc_clock_skew_s", "301")],
            "oidc_clock_skew_s",
            "maximum of 300",
        ),
        (
            &[("oidc_hs_secret", "short")],
            "oidc_hs_secret",
            "at least 32",
        ),
        (
            &[("oidc_jwks_uri", "ftp://x/jwks")],
            "oidc_jwks_uri",
            "http(s) URL",
        ),
    ];
    for (extra, variable, why) in cases {
        let mut vars = OIDC.to_vec();
        vars.extend_from_slice(extra);
        if variable == &"auth_api_keys" {
            vars[0] = ("auth_mode", "api_key,oidc");
        }
        let e = config(&vars).unwrap_err();
        assert!(e.starts_with(variable), "{extra:?}: {e}");
        assert!(e.contains(why), "{extra:?}: expected `{why}` in {e}");
    }
    // Without oidc in the mode, the oidc variables are not read.
    assert!(config(&[("oidc_clock_skew_s", "x")]).is_ok());
}
