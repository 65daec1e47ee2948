//! `GET /health/live` as a Spin component of its own (spin.toml routes the path here).
//!
//! Why not the dispatcher: a request instantiates its Spin component whole, and the
//! dispatcher comes with its five dependencies composed in (six memories, six times the
//! tables and core instances), so every probe paid for the whole agent and Spin's instance
//! pool held about a sixth as many probes at once as it could (`devhost --footprint`).
//! This component has no dependencies, no key-value store and no outbound hosts.
//!
//! It answers exactly as the dispatcher does, with the same code (kg_http::liveness; the
//! dispatcher still answers liveness on a path spin.toml does not route here, e.g. with a
//! trailing slash): 200 `{"status":"ok"}` with every API response's headers, a CORS
//! preflight as the API's, and a JSON 405 for any other method. It never reads the
//! request body, so a probe with a broken one is still answered.

use spin_sdk::http::{IncomingRequest, OutgoingResponse, Response, ResponseOutparam};
use spin_sdk::http_component;

// One file shared with the other HTTP components without a dependency on kg-spin (whose
// imports this component must not have): see it for why the body goes before the head.
#[path = "../../../crates/kg-spin/src/whole_response.rs"]
mod whole_response;

#[http_component]
async fn handle(incoming: IncomingRequest, out: ResponseOutparam) {
    let mut response = respond(&incoming);
    let body = std::mem::take(response.body_mut());
    match OutgoingResponse::try_from(response) {
        Ok(outgoing) => whole_response::send_whole(out, outgoing, &body),
        Err(e) => eprintln!("liveness: could not build the response: {e}"),
    }
}

fn respond(incoming: &IncomingRequest) -> Response {
    let origin = incoming
        .headers()
        .get("origin")
        .into_iter()
        .next()
        .and_then(|value| String::from_utf8(value).ok());
    let variable = |name: &str| spin_sdk::variables::get(name).unwrap_or_default();
    let answer = kg_http::liveness::answer(
        &incoming.method().to_string(),
        origin.as_deref(),
        &variable("cors_allowed_origins"),
        &variable("auth_mode"),
    );
    let mut response = Response::builder();
    response.status(answer.status);
    for (name, value) in answer.headers {
        response.header(name, value);
    }
    match answer.body {
        Some(body) => response.body(body).build(),
        None => response.build(),
    }
}
