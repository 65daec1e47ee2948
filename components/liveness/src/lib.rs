//! `GET /health/live` as a Spin component of its own (spin.toml routes the path here).
//!
//! Why not the dispatcher: a request instantiates its Spin component whole, and the
//! dispatcher comes with its five dependencies composed in (six memories, six times the
//! tables and core instances), so every probe paid for the whole agent and Spin's instance
//! pool held about a sixth as many probes at once as it could (`devhost --footprint`).
//! This component has no dependencies, no key-value store and no outbound hosts.
//!
//! It answers exactly as the dispatcher does (the dispatcher still answers liveness on a
//! path spin.toml does not route here, e.g. with a trailing slash): 200 `{"status":"ok"}`
//! with every API response's headers (kg_http::headers), a CORS preflight as the API's,
//! and a JSON 405 for any other method. It never reads the request body, so a probe with
//! a broken one is still answered.

use kg_http::headers::{self, Context};
use spin_sdk::http::{IncomingRequest, Method, Response};
use spin_sdk::http_component;

#[http_component]
async fn handle(incoming: IncomingRequest) -> Response {
    let origin = incoming
        .headers()
        .get("origin")
        .into_iter()
        .next()
        .and_then(|value| String::from_utf8(value).ok());
    let variable = |name: &str| spin_sdk::variables::get(name).unwrap_or_default();
    let ctx = Context {
        allowed_origin: origin
            .and_then(|o| headers::allowed(&o, &variable("cors_allowed_origins"))),
        anonymous_mode: headers::anonymous(&variable("auth_mode")),
        auth_ms: None,
    };
    let (status, body, mut fields) = match incoming.method() {
        Method::Get => (
            200,
            Some(serde_json::json!({"status": "ok"})),
            headers::common(&ctx),
        ),
        Method::Options => (204, None, headers::preflight(&ctx)),
        other => {
            let error = kg_http::ApiError::new(
                405,
                "method_not_allowed",
                format!("{other} is not allowed on /health/live; use GET"),
            );
            let mut fields = headers::common(&ctx);
            fields.push(("allow".into(), "GET, OPTIONS".into()));
            (405, Some(error.to_json()), fields)
        }
    };
    let mut response = Response::builder();
    response.status(status);
    if body.is_some() {
        fields.push(("content-type".into(), "application/json".into()));
    }
    for (name, value) in fields {
        response.header(name, value);
    }
    match body {
        Some(body) => response.body(body.to_string()).build(),
        None => response.build(),
    }
}
