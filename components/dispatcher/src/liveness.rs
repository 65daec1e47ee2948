//! `GET /health/live`: the instance answers; nothing more (no credential, no details).
//!
//! A probe every few seconds from each orchestrator, so it is answered before anything
//! else is read: not the request's headers (only `Origin`, for CORS), not the tracing
//! settings, and it is neither traced nor logged (it would drown the request log and the
//! trace store in probes; `/health/ready` and `/health` are). Its headers are every
//! response's (`headers::common`): `nosniff`, `no-store`, the `auth_mode=none` warning.

use spin_sdk::http::{IncomingRequest, Request, Response, ResponseOutparam};

/// Whether the request (its method and its path and query, as routed) is a liveness probe.
pub fn asked(head: &Request, method: &str) -> bool {
    matches!(
        kg_http::route(method, head.path()),
        Ok(kg_http::Route::HealthLive)
    )
}

/// The answer to a probe (kg_http::liveness, as the liveness component's), its headers
/// read from the request as the response needs them.
pub async fn answer(incoming: &IncomingRequest, response_out: ResponseOutparam) {
    let origin = incoming
        .headers()
        .get("origin")
        .into_iter()
        .next()
        .and_then(|value| String::from_utf8(value).ok());
    let variable = |name: &str| kg_spin::variable(name).unwrap_or_default();
    let answer = kg_http::liveness::answer(
        "GET",
        origin.as_deref(),
        &variable("cors_allowed_origins"),
        &variable("auth_mode"),
    );
    let mut response = Response::builder()
        .status(answer.status)
        .body(answer.body.unwrap_or_default())
        .build();
    for (name, value) in &answer.headers {
        response.set_header(name.as_str(), value.as_str());
    }
    crate::send(response_out, response);
}

/// The probe's status and body.
pub fn response() -> Response {
    crate::json_response(200, &kg_http::liveness::body())
}
