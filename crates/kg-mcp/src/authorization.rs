//! MCP authorization's discovery (RFC 9728): where a client that got a `401` learns which
//! authorization server issues tokens for `/mcp`. The metadata names the configured OpenID
//! Connect issuer; API keys need no discovery (the client is configured with one).

use serde_json::{Value, json};

/// The path of `/mcp`'s protected resource metadata (RFC 9728 §3.1: the well-known prefix
/// inserted before the resource's path).
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource/mcp";

/// The metadata document for the resource `{origin}/mcp`.
pub fn metadata(origin: &str, issuer: Option<&str>, scopes: &[&str]) -> Value {
    let mut document = json!({
        "resource": format!("{origin}/mcp"),
        "resource_name": "kg-agent",
        "bearer_methods_supported": ["header"],
    });
    if let Some(issuer) = issuer {
        document["authorization_servers"] = json!([issuer.trim_end_matches('/')]);
        document["scopes_supported"] = json!(scopes);
    }
    document
}

/// The `resource_metadata` parameter a `401` of `/mcp` adds to its `WWW-Authenticate`.
pub fn challenge_parameter(origin: &str) -> String {
    format!("resource_metadata=\"{origin}{METADATA_PATH}\"")
}

/// The origin clients reach the app at: `configured` (the `public_url` variable, its
/// trailing `/` dropped) when set, else the request's `Host` with the scheme a proxy names
/// in `X-Forwarded-Proto`, else `http` for a loopback host and `https` for any other.
/// `None` when neither gives a usable origin (a host with characters no host name has:
/// it would end up inside a quoted header parameter).
pub fn origin(
    configured: Option<&str>,
    host: Option<&str>,
    forwarded_proto: Option<&str>,
) -> Option<String> {
    if let Some(url) = configured.map(str::trim).filter(|u| !u.is_empty()) {
        // Serialised by the URL Standard: no quote, backslash, space or control character
        // is left to break out of a quoted header parameter.
        let url = kg_url::http_base("public_url", url).ok()?;
        return Some(url.as_str().trim_end_matches('/').to_string());
    }
    let host = host?.trim();
    let valid = !host.is_empty()
        && host.len() <= 255
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']'));
    if !valid {
        return None;
    }
    let scheme = match forwarded_proto.map(str::trim) {
        Some("https") => "https",
        Some("http") => "http",
        _ if is_loopback(host) => "http",
        _ => "https",
    };
    Some(format!("{scheme}://{host}"))
}

fn is_loopback(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(bracketed) => bracketed.split(']').next().unwrap_or_default(),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    name == "localhost" || name.starts_with("127.") || name == "::1"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metadata_names_the_issuer_when_there_is_one() {
        let with = metadata(
            "https://kg.example",
            Some("https://id.example/"),
            &["openid", "kg"],
        );
        assert_eq!(with["resource"], "https://kg.example/mcp");
        assert_eq!(with["authorization_servers"], json!(["https://id.example"]));
        assert_eq!(with["scopes_supported"], json!(["openid", "kg"]));
        let without = metadata("https://kg.example", None, &[]);
        assert!(without.get("authorization_servers").is_none());
        assert_eq!(without["bearer_methods_supported"], json!(["header"]));
    }

    #[test]
    fn the_origin_comes_from_the_setting_else_the_request() {
        assert_eq!(
            origin(Some("https://kg.example/"), Some("x"), None).as_deref(),
            Some("https://kg.example")
        );
        assert_eq!(origin(Some("ftp://x"), Some("x"), None), None);
        assert_eq!(
            origin(None, Some("127.0.0.1:3000"), None).as_deref(),
            Some("http://127.0.0.1:3000")
        );
        assert_eq!(
            origin(None, Some("localhost"), None).as_deref(),
            Some("http://localhost")
        );
        assert_eq!(
            origin(None, Some("[::1]:3000"), None).as_deref(),
            Some("http://[::1]:3000")
        );
        assert_eq!(
            origin(None, Some("kg.example"), None).as_deref(),
            Some("https://kg.example")
        );
        assert_eq!(
            origin(None, Some("kg.example"), Some("http")).as_deref(),
            Some("http://kg.example")
        );
        assert_eq!(origin(None, Some("evil\"host"), None), None);
        assert_eq!(origin(None, Some(""), None), None);
        assert_eq!(origin(None, None, None), None);
    }

    #[test]
    fn the_challenge_points_at_the_metadata() {
        assert_eq!(
            challenge_parameter("http://127.0.0.1:3000"),
            "resource_metadata=\"http://127.0.0.1:3000/.well-known/oauth-protected-resource/mcp\""
        );
    }
}
