//! The request's trace and its log line.
//!
//! Each request is one trace: the caller's when it sends W3C `traceparent` (its sampling
//! decision kept), a new one otherwise. The server span covers the whole request, a
//! stream included; the components' spans are handed over around each WIT call
//! ([`component_call`]). The response names the trace (`traceparent`, `x-trace-id`) so a
//! user's report can be found in the trace store. After the response is sent, one JSON
//! line goes to stderr (no message content) and the spans are exported.

use kg_telemetry::{ActiveSpan, SpanKind, TraceId, TraceParent, attr};
use spin_sdk::http::Request;

pub struct RequestTrace {
    span: ActiveSpan,
    trace_id: TraceId,
    /// The server span's context, for the response header.
    traceparent: Option<String>,
    started: u64,
    method: String,
    route: String,
    status: u16,
    subject: Option<String>,
}

impl RequestTrace {
    /// Opens the request's trace and its server span.
    pub fn begin(request: &Request, method: &str) -> RequestTrace {
        let started = wasi::clocks::monotonic_clock::now();
        let header = |name: &str| request.header(name).and_then(|v| v.as_str());
        let incoming = header("traceparent").and_then(TraceParent::parse);
        // tracestate belongs to a traceparent; alone it is meaningless.
        let state = incoming
            .and(header("tracestate"))
            .and_then(kg_telemetry::parse_tracestate);
        let trace_id =
            kg_telemetry::begin(incoming, state, kg_spin::telemetry::settings("dispatcher"));
        let route = route_template(method, request.path());
        let mut span = kg_telemetry::span(&format!("{method} {route}"), SpanKind::Server);
        span.set(attr::HTTP_REQUEST_METHOD, method);
        span.set(attr::HTTP_ROUTE, route.as_str());
        let traceparent = kg_telemetry::current_traceparent();
        RequestTrace {
            span,
            trace_id,
            traceparent,
            started,
            method: method.to_string(),
            route,
            status: 200,
            subject: None,
        }
    }

    /// The authenticated caller, for the log line and the span.
    pub fn admitted(&mut self, subject: &str) {
        self.subject = Some(subject.to_string());
        self.span.set("enduser.id", subject);
    }

    pub fn status(&mut self, status: u16) {
        self.status = status;
    }

    /// `traceparent` (the request's server span) and `x-trace-id` for the response.
    pub fn response_headers(&self) -> Vec<(String, String)> {
        let mut headers = vec![("x-trace-id".to_string(), self.trace_id.to_string())];
        if let Some(parent) = &self.traceparent {
            headers.push(("traceparent".to_string(), parent.clone()));
        }
        headers
    }

    /// After the response is sent: ends the server span, logs the request and exports
    /// the trace.
    pub fn finish(mut self) {
        let latency_ms =
            wasi::clocks::monotonic_clock::now().saturating_sub(self.started) as f64 / 1_000_000.0;
        self.span.set(attr::HTTP_RESPONSE_STATUS_CODE, self.status);
        // Server spans are errors on 5xx only: a 4xx is the caller's mistake.
        if self.status >= 500 {
            self.span
                .fail(&self.status.to_string(), &format!("HTTP {}", self.status));
        }
        drop(self.span);
        // One string and one write: printing a JSON value through `{}` to the unbuffered
        // stderr makes a write (a host call) per token, ~200 per request.
        let mut line = serde_json::json!({
            "level": "info",
            "time_unix_ms": std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64),
            "message": "request",
            "trace_id": self.trace_id.to_string(),
            "method": self.method,
            "route": self.route,
            "status": self.status,
            "latency_ms": (latency_ms * 1000.0).round() / 1000.0,
            "subject": self.subject,
        })
        .to_string();
        line.push('\n');
        let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), line.as_bytes());
        kg_spin::telemetry::export(env!("CARGO_PKG_VERSION"));
    }
}

/// The route as a template (`/conversations/{id}`, docs/openapi.json's), never the ids
/// themselves: a low-cardinality span name and log field; an unknown route is `unmatched`.
fn route_template(method: &str, path: &str) -> String {
    kg_http::route(method, path)
        .map_or("unmatched", |route| route.template().1)
        .to_string()
}

/// Runs one call into another component inside a span, handing the component the trace
/// context first and taking its spans back after. A WIT error marks the span failed with
/// its code. Costs nothing while not recording.
pub fn component_call<T: Outcome>(
    name: &str,
    use_trace_context: impl FnOnce(&str),
    take_spans: impl FnOnce() -> String,
    call: impl FnOnce() -> T,
) -> T {
    component_call_described(name, use_trace_context, take_spans, call, |_, _| {})
}

/// [`component_call`], then `describe` records what the answer says on the span.
pub fn component_call_described<T: Outcome>(
    name: &str,
    use_trace_context: impl FnOnce(&str),
    take_spans: impl FnOnce() -> String,
    call: impl FnOnce() -> T,
    describe: impl FnOnce(&mut ActiveSpan, &T),
) -> T {
    if !kg_telemetry::is_recording() {
        // A caller's unsampled trace still reaches the component's own outbound calls.
        if kg_telemetry::continues_caller()
            && let Some(parent) = kg_telemetry::current_traceparent()
        {
            use_trace_context(&parent);
        }
        return call();
    }
    let mut span = kg_telemetry::span(name, SpanKind::Internal);
    if let Some(parent) = kg_telemetry::current_traceparent() {
        use_trace_context(&parent);
    }
    let answer = call();
    kg_telemetry::absorb(take_spans());
    if let Some(error) = answer.error() {
        span.fail(&format!("{:?}", error.code).to_lowercase(), &error.message);
    }
    describe(&mut span, &answer);
    answer
}

/// What a component answered, as far as its span cares: the WIT error, if any.
pub trait Outcome {
    fn error(&self) -> Option<&kg_wit::types::Error>;
}

impl<A> Outcome for Result<A, kg_wit::types::Error> {
    fn error(&self) -> Option<&kg_wit::types::Error> {
        self.as_ref().err()
    }
}

impl<A> Outcome for Vec<A> {
    fn error(&self) -> Option<&kg_wit::types::Error> {
        None
    }
}
