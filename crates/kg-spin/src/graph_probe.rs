//! Is the graph there? `RETURN 1` in READ mode with the configured credentials and
//! database, posted to the Query API and given up after `GRAPH_PROBE_TIMEOUT`: a frozen
//! server must not hang a readiness probe (the components' own graph check has no
//! deadline of its own).
//!
//! One request sent as is rather than through `neo4j_client::Client`: the client is
//! generic over its transport, and a second transport type (one with a deadline) made a
//! second copy of it, about 200 KB more in the dispatcher's Wasm (measured).

use crate::llm::within;
use crate::neo4j::{GraphUser, graph_config, send_async};
use neo4j_client::{HttpRequest, Method};
use serde_json::Value;
use std::time::Duration;

/// A probe gives up after this long.
pub const GRAPH_PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// `Ok(())` when the graph answered `RETURN 1`, else why not.
pub fn graph_probe() -> Result<(), String> {
    let config = graph_config(GraphUser::Writer)?;
    let mut headers = vec![
        ("content-type".to_string(), "application/json".to_string()),
        ("accept".to_string(), "application/json".to_string()),
    ];
    if let Some(value) = config.auth.header() {
        headers.push(("authorization".to_string(), value));
    }
    let request = HttpRequest {
        method: Method::Post,
        url: config.query_url(),
        headers,
        body: Some(br#"{"statement":"RETURN 1 AS ok","accessMode":"READ"}"#.to_vec()),
    };
    let millis = GRAPH_PROBE_TIMEOUT.as_millis();
    let response = match spin_sdk::http::run(within(GRAPH_PROBE_TIMEOUT, send_async(request))) {
        None => return Err(format!("graph unreachable: no answer within {millis} ms")),
        Some(Err(e)) => return Err(format!("graph unreachable: {}", e.message)),
        Some(Ok(response)) => response,
    };
    let body: Value = serde_json::from_slice(&response.body).unwrap_or(Value::Null);
    // The Query API reports a refused statement (credentials, database) in `errors`.
    let error = body["errors"].get(0).map(|e| {
        format!(
            "{}: {}",
            e["code"].as_str().unwrap_or("error"),
            e["message"].as_str().unwrap_or_default()
        )
    });
    match (response.status, error) {
        (200..=299, None) => Ok(()),
        (status, Some(error)) => Err(format!("graph answered {status}: {error}")),
        (status, None) => {
            let text = String::from_utf8_lossy(&response.body);
            let start: String = text.chars().take(200).collect();
            Err(format!("graph answered {status}: {start}"))
        }
    }
}
