//! Headers every API response carries, as plain data: no caching of API data, no MIME
//! sniffing, CORS only for the origins listed in `cors_allowed_origins`, the loud warning
//! of `auth_mode = "none"`, and how long authentication took (`Server-Timing`). Shared by
//! the dispatcher and the liveness component, which answer the same way; each reads the
//! variables itself.

pub const AUTH_WARNING: &str = "x-kg-auth-warning";
const WARNING_TEXT: &str = "auth_mode=none: authentication is OFF, every request acts as an admin; for local experiments only";

/// What the headers of one response depend on.
#[derive(Debug, Default)]
pub struct Context {
    /// The request's `Origin`, when it is on the allow-list.
    pub allowed_origin: Option<String>,
    pub anonymous_mode: bool,
    pub auth_ms: Option<f64>,
}

/// `origin` (an `Origin` header's value), if `allow_list` (`cors_allowed_origins`:
/// comma-separated, exact match; empty: CORS off) lists it.
pub fn allowed(origin: &str, allow_list: &str) -> Option<String> {
    let origin = origin.trim();
    allow_list
        .split(',')
        .map(str::trim)
        .any(|allowed| !allowed.is_empty() && allowed == origin)
        .then(|| origin.to_string())
}

/// Whether `auth_mode` (the variable's value) turns authentication off.
pub fn anonymous(auth_mode: &str) -> bool {
    auth_mode.trim() == "none"
}

pub fn common(ctx: &Context) -> Vec<(String, String)> {
    let mut headers = vec![
        ("x-content-type-options".to_string(), "nosniff".to_string()),
        ("cache-control".to_string(), "no-store".to_string()),
        ("referrer-policy".to_string(), "no-referrer".to_string()),
    ];
    if let Some(origin) = &ctx.allowed_origin {
        headers.push(("access-control-allow-origin".into(), origin.clone()));
        headers.push(("vary".into(), "Origin".into()));
        headers.push((
            "access-control-expose-headers".into(),
            "www-authenticate, retry-after, server-timing, x-kg-auth-warning, x-deprecation-warning"
                .into(),
        ));
    }
    if ctx.anonymous_mode {
        headers.push((AUTH_WARNING.into(), WARNING_TEXT.into()));
    }
    if let Some(ms) = ctx.auth_ms {
        headers.push(("server-timing".into(), format!("auth;dur={ms:.3}")));
    }
    headers
}

/// The answer to a CORS preflight: permissions for an allowed origin, nothing otherwise
/// (the browser then refuses the real request). Carries no data, so it needs no credential.
pub fn preflight(ctx: &Context) -> Vec<(String, String)> {
    let mut headers = common(ctx);
    if ctx.allowed_origin.is_some() {
        headers.push((
            "access-control-allow-methods".into(),
            "GET, POST, DELETE".into(),
        ));
        headers.push((
            "access-control-allow-headers".into(),
            "authorization, content-type, accept, idempotency-key, last-event-id, traceparent"
                .into(),
        ));
        headers.push(("access-control-max-age".into(), "600".into()));
    }
    headers
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_listed_origins_are_allowed_exactly() {
        let list = "https://app.example, http://127.0.0.1:5173";
        assert_eq!(
            allowed(" https://app.example ", list).as_deref(),
            Some("https://app.example")
        );
        assert_eq!(allowed("https://evil.example", list), None);
        assert_eq!(allowed("https://app.example.evil", list), None);
        assert_eq!(allowed("", ""), None, "an empty list allows nothing");
        assert_eq!(allowed("", " , "), None);
    }

    #[test]
    fn the_warning_and_cors_headers_follow_the_context() {
        let names = |ctx: &Context| -> Vec<String> {
            common(ctx).into_iter().map(|(name, _)| name).collect()
        };
        let plain = Context::default();
        assert!(!names(&plain).contains(&AUTH_WARNING.to_string()));
        assert!(!names(&plain).contains(&"access-control-allow-origin".to_string()));
        let open = Context {
            allowed_origin: Some("https://app.example".into()),
            anonymous_mode: anonymous(" none "),
            auth_ms: None,
        };
        assert!(names(&open).contains(&AUTH_WARNING.to_string()));
        assert!(
            preflight(&open)
                .iter()
                .any(|(n, _)| n == "access-control-max-age")
        );
        assert!(!anonymous("api_key"));
    }
}
