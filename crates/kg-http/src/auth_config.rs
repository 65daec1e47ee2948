//! `GET /auth/config`: what a browser needs to sign in, answered without a credential.
//! Only non-secret values: the auth modes, and when OpenID Connect is on and a public
//! client is configured, the issuer, that client's id, the scopes to ask for and the
//! audience to ask for (the first of `oidc_audience`'s comma-separated accepted audiences,
//! which every token carries anyway: providers that mint tokens per API need it in the
//! authorization and refresh requests). The roles claim and the HMAC secret stay on the
//! server.

use serde_json::{Value, json};

/// The scopes asked for when `oidc_scopes` is empty.
pub const DEFAULT_SCOPES: &str = "openid";

/// The body of `GET /auth/config`, from the Spin variables (`get` returns `None` or an
/// empty string for an unset one). `oidc` is `null` unless the mode includes `oidc` and
/// both `oidc_issuer` and `oidc_client_id` are set: the app then offers only API keys.
pub fn auth_config(get: &dyn Fn(&str) -> Option<String>) -> Value {
    let var = |name: &str| {
        get(name)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let mode = var("auth_mode").unwrap_or_else(|| "api_key".into());
    let modes: Vec<String> = mode
        .split(',')
        .map(|m| m.trim().to_ascii_lowercase())
        .filter(|m| ["api_key", "oidc", "none"].contains(&m.as_str()))
        .collect();
    let oidc = match (
        modes.iter().any(|m| m == "oidc"),
        var("oidc_issuer"),
        var("oidc_client_id"),
    ) {
        (true, Some(issuer), Some(client_id)) => {
            let scopes = var("oidc_scopes").unwrap_or_else(|| DEFAULT_SCOPES.into());
            let scopes: Vec<&str> = scopes.split_whitespace().collect();
            json!({
                "issuer": issuer.trim_end_matches('/'),
                "client_id": client_id,
                "scopes": scopes.join(" "),
                "audience": var("oidc_audience").and_then(|list| {
                    list.split(',')
                        .map(str::trim)
                        .find(|a| !a.is_empty())
                        .map(String::from)
                }),
            })
        }
        _ => Value::Null,
    };
    json!({"modes": modes, "oidc": oidc})
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn with(pairs: &[(&str, &str)]) -> Value {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        auth_config(&|name| map.get(name).cloned())
    }

    #[test]
    fn api_keys_only_by_default() {
        assert_eq!(with(&[]), json!({"modes": ["api_key"], "oidc": null}));
    }

    #[test]
    fn oidc_with_a_public_client() {
        let c = with(&[
            ("auth_mode", "api_key, oidc"),
            ("oidc_issuer", "https://kc.example.com/realms/acme/"),
            ("oidc_client_id", "kg-web"),
            ("oidc_scopes", " openid  profile "),
            ("oidc_audience", " kg-agent, kg-agent-staging"),
            ("oidc_hs_secret", "s3cret"),
            ("auth_api_keys", "alice|admin|00"),
        ]);
        assert_eq!(
            c,
            json!({"modes": ["api_key", "oidc"], "oidc": {
                "issuer": "https://kc.example.com/realms/acme",
                "client_id": "kg-web",
                "scopes": "openid profile",
                "audience": "kg-agent",
            }})
        );
        let text = c.to_string();
        assert!(!text.contains("s3cret") && !text.contains("alice"));
    }

    #[test]
    fn no_browser_sign_in_without_mode_issuer_or_client() {
        let issuer = ("oidc_issuer", "https://id.example.com");
        let client = ("oidc_client_id", "web");
        assert_eq!(with(&[issuer, client])["oidc"], Value::Null);
        assert_eq!(with(&[("auth_mode", "oidc"), issuer])["oidc"], Value::Null);
        assert_eq!(with(&[("auth_mode", "oidc"), client])["oidc"], Value::Null);
        let defaults = with(&[
            ("auth_mode", "oidc"),
            issuer,
            client,
            ("oidc_audience", " "),
        ]);
        assert_eq!(defaults["oidc"]["scopes"], json!("openid"));
        // No audience configured: none asked for.
        assert_eq!(defaults["oidc"]["audience"], Value::Null);
    }
}
