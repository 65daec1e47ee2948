//! Headers every dispatcher response carries: no caching of API data, no MIME sniffing,
//! CORS only for the origins listed in `cors_allowed_origins`, the loud warning of
//! `auth_mode = "none"`, and how long authentication took (`Server-Timing`).

use spin_sdk::http::Request;

pub const AUTH_WARNING: &str = "x-kg-auth-warning";
const WARNING_TEXT: &str = "auth_mode=none: authentication is OFF, every request acts as an admin; for local experiments only";

/// What the headers of one response depend on.
#[derive(Default)]
pub struct Context {
    /// The request's `Origin`, when it is on the allow-list.
    pub allowed_origin: Option<String>,
    pub anonymous_mode: bool,
    pub auth_ms: Option<f64>,
}

/// The allow-listed `Origin` of a request, if any (exact match; CORS is off by default).
pub fn allowed_origin(request: &Request) -> Option<String> {
    allowed(request.header("origin")?.as_str()?)
}

/// `origin` (an `Origin` header's value), if `cors_allowed_origins` lists it.
pub fn allowed(origin: &str) -> Option<String> {
    let origin = origin.trim();
    let list = kg_spin::variable("cors_allowed_origins").unwrap_or_default();
    list.split(',')
        .map(str::trim)
        .any(|allowed| !allowed.is_empty() && allowed == origin)
        .then(|| origin.to_string())
}

/// Whether `auth_mode` is `none` (authentication off: every response warns).
pub fn anonymous_mode() -> bool {
    kg_spin::variable("auth_mode").is_ok_and(|m| m.trim() == "none")
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

/// The headers of an event stream: its content type plus `extra` (the common headers).
pub fn sse_fields(extra: &[(String, String)]) -> Result<spin_sdk::http::Fields, String> {
    let mut list = vec![(
        "content-type".to_string(),
        kg_http::sse::CONTENT_TYPE.as_bytes().to_vec(),
    )];
    list.extend(
        extra
            .iter()
            .map(|(name, value)| (name.clone(), value.as_bytes().to_vec())),
    );
    spin_sdk::http::Fields::from_list(&list).map_err(|e| format!("{e:?}"))
}
