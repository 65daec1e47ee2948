//! Headers every dispatcher response carries (kg_http::headers), with the variables they
//! depend on read here.

use spin_sdk::http::Request;

pub use kg_http::headers::{Context, common, preflight};

/// The allow-listed `Origin` of a request, if any (exact match; CORS is off by default).
pub fn allowed_origin(request: &Request) -> Option<String> {
    allowed(request.header("origin")?.as_str()?)
}

/// `origin` (an `Origin` header's value), if `cors_allowed_origins` lists it.
pub fn allowed(origin: &str) -> Option<String> {
    let list = kg_spin::variable("cors_allowed_origins").unwrap_or_default();
    kg_http::headers::allowed(origin, &list)
}

/// Whether `auth_mode` is `none` (authentication off: every response warns).
pub fn anonymous_mode() -> bool {
    kg_spin::variable("auth_mode").is_ok_and(|m| kg_http::headers::anonymous(&m))
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
