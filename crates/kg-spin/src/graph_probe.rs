//! Is the graph there? `RETURN 1` in READ mode with the configured credentials and
//! database, given up after `GRAPH_PROBE_TIMEOUT`: a frozen server must not hang a
//! readiness probe (the components' own graph check has no deadline of its own).

use crate::llm::within;
use crate::neo4j::{GraphUser, graph_config, send_async};
use neo4j_client::{
    AccessMode, Client, HttpRequest, HttpResponse, Transport, TransportError, TransportErrorKind,
};
use std::time::Duration;

/// A probe gives up after this long.
pub const GRAPH_PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// Spin outbound HTTP, each request raced against a deadline.
struct DeadlineTransport(Duration);

impl Transport for DeadlineTransport {
    fn send(&self, request: HttpRequest) -> Result<HttpResponse, TransportError> {
        let millis = self.0.as_millis();
        spin_sdk::http::run(within(self.0, send_async(request))).unwrap_or_else(|| {
            Err(TransportError {
                kind: TransportErrorKind::Timeout,
                message: format!("no answer within {millis} ms"),
            })
        })
    }
}

/// `Ok(())` when the graph answered `RETURN 1`, else why not.
pub fn graph_probe() -> Result<(), String> {
    let client = Client::new(
        graph_config(GraphUser::Writer)?,
        DeadlineTransport(GRAPH_PROBE_TIMEOUT),
    );
    client
        .run("RETURN 1 AS ok", Default::default(), AccessMode::Read)
        .map(|_| ())
        .map_err(|e| format!("graph unreachable: {e}"))
}
