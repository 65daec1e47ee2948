//! `GET /health/live`: the instance answers; nothing more (no credential, no details).
//!
//! A probe every few seconds from each orchestrator, so it is answered before anything
//! else is read: not the request's headers (only `Origin`, for CORS), not the tracing
//! settings, and it is neither traced nor logged (it would drown the request log and the
//! trace store in probes; `/health/ready` and `/health` are). Its headers are every
//! response's (`headers::common`): `nosniff`, `no-store`, the `auth_mode=none` warning.

use crate::headers;
use spin_sdk::http::{IncomingRequest, Request, Response, ResponseOutparam};

/// Whether the request (its method and its path and query, as routed) is a liveness probe.
pub fn asked(head: &Request, method: &str) -> bool {
    matches!(
        kg_http::route(method, head.path()),
        Ok(kg_http::Route::HealthLive)
    )
}

/// The answer to a probe, its headers read from the request as the response needs them.
pub async fn answer(incoming: &IncomingRequest, response_out: ResponseOutparam) {
    let origin = incoming
        .headers()
        .get("origin")
        .into_iter()
        .next()
        .and_then(|value| String::from_utf8(value).ok());
    let ctx = headers::Context {
        allowed_origin: origin.and_then(|o| headers::allowed(&o)),
        anonymous_mode: headers::anonymous_mode(),
        auth_ms: None,
    };
    let mut response = response();
    for (name, value) in headers::common(&ctx) {
        response.set_header(name.as_str(), value.as_str());
    }
    crate::send(response_out, response).await;
}

/// The probe's status and body.
pub fn response() -> Response {
    crate::json_response(200, &serde_json::json!({"status": "ok"}))
}
