//! Tracing over Spin: the `otel_*` variables, joining a trace a caller handed over, and
//! the OTLP/HTTP export of the request's spans.
//!
//! Export is one `POST {otel_exporter_otlp_endpoint}/v1/traces` (OTLP JSON) after the
//! response has been sent, so it adds nothing to the user's wait. A collector that is
//! down or slow (2 s at most) costs the instance that time after the response and loses
//! that request's spans; it never fails a request. The warning it leaves on stderr is
//! written at most once a minute across instances (the time of the last one is kept in
//! the key-value store), so a collector outage does not flood the logs.

use crate::{send_async, variable, within};
use kg_telemetry::Settings;
use neo4j_client::{HttpRequest, Method};
use std::cell::OnceCell;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long an export may take after the response.
pub const EXPORT_TIMEOUT: Duration = Duration::from_secs(2);
/// Export failures are logged at most this often.
const WARNING_INTERVAL_S: u64 = 60;
const WARNED_AT_KEY: &str = "telemetry/export-warned-at";

thread_local! {
    static CONFIG: OnceCell<Config> = const { OnceCell::new() };
}

#[derive(Clone)]
struct Config {
    /// Full URL of the traces endpoint; empty: tracing off.
    traces_url: String,
    headers: Vec<(String, String)>,
    ratio: f64,
    capture_content: bool,
    capture_statements: bool,
}

fn config() -> Config {
    CONFIG.with(|c| c.get_or_init(read_config).clone())
}

fn read_config() -> Config {
    // Per instance, before any id is made (see `kg_telemetry::ids::seed`).
    kg_telemetry::ids::seed(wasi::random::random::get_random_u64());
    let optional = |name: &str| variable(name).unwrap_or_default();
    let flag = |name: &str| matches!(optional(name).trim(), "true" | "1" | "yes" | "on");
    Config {
        traces_url: traces_url(&optional("otel_exporter_otlp_endpoint")).unwrap_or_else(|e| {
            // Read once per instance: one line per instance, and no export to a URL that
            // is not one.
            eprintln!(
                "{}",
                serde_json::json!({"level": "warn", "message": "tracing is off", "error": e.to_string()})
            );
            String::new()
        }),
        headers: parse_headers(&optional("otel_exporter_otlp_headers")),
        ratio: kg_telemetry::sampler::parse_ratio(&optional("otel_traces_sampler_ratio")),
        capture_content: flag("otel_capture_content"),
        capture_statements: flag("otel_capture_statements"),
    }
}

/// The recorder settings of `component` from the `otel_*` variables (read once per
/// instance).
pub fn settings(component: &'static str) -> Settings {
    let config = config();
    Settings {
        export: !config.traces_url.is_empty(),
        ratio: config.ratio,
        capture_content: config.capture_content,
        capture_statements: config.capture_statements,
        component,
    }
}

/// A component joins the trace the dispatcher hands it (`use-trace-context`).
pub fn adopt(traceparent: &str, component: &'static str) {
    kg_telemetry::adopt(traceparent, settings(component));
}

/// A component's finished spans for the dispatcher (`take-spans`): an OTLP JSON array.
pub fn take_spans() -> String {
    kg_telemetry::otlp::encode_spans(&kg_telemetry::take_finished())
}

/// Whether an exporter is configured.
pub fn export_enabled() -> bool {
    !config().traces_url.is_empty()
}

/// Sends every span of this instance's trace (its own and those it absorbed from other
/// components) to the collector, then forgets them. Does nothing when tracing is off or
/// nothing was recorded. Never fails: a failure is a rate-limited warning.
pub fn export(service_version: &str) {
    let config = config();
    let spans = kg_telemetry::take_finished();
    let absorbed = kg_telemetry::take_absorbed();
    // The export request must not carry the trace it reports on.
    kg_telemetry::reset();
    if config.traces_url.is_empty() || (spans.is_empty() && absorbed.is_empty()) {
        return;
    }
    let body = kg_telemetry::otlp::export_request("kg-agent", service_version, &spans, &absorbed);
    let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
    headers.extend(config.headers.iter().cloned());
    let request = HttpRequest {
        method: Method::Post,
        url: config.traces_url.clone(),
        headers,
        body: Some(body.into_bytes()),
    };
    let outcome = spin_sdk::http::run(within(EXPORT_TIMEOUT, send_async(request)));
    let problem = match outcome {
        None => Some(format!(
            "no answer within {} ms",
            EXPORT_TIMEOUT.as_millis()
        )),
        Some(Err(e)) => Some(e.message),
        Some(Ok(response)) if (200..300).contains(&response.status) => None,
        Some(Ok(response)) => Some(format!("HTTP {}", response.status)),
    };
    if let Some(problem) = problem {
        warn_rate_limited(&config.traces_url, &problem);
    }
}

fn warn_rate_limited(url: &str, problem: &str) {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let store = spin_sdk::key_value::Store::open_default().ok();
    let last = store
        .as_ref()
        .and_then(|s| s.get(WARNED_AT_KEY).ok().flatten())
        .and_then(|v| String::from_utf8(v).ok())
        .and_then(|v| v.parse::<u64>().ok());
    if last.is_some_and(|at| now.saturating_sub(at) < WARNING_INTERVAL_S) {
        return;
    }
    if let Some(store) = &store {
        let _ = store.set(WARNED_AT_KEY, now.to_string().as_bytes());
    }
    eprintln!(
        "{}",
        serde_json::json!({
            "level": "warn",
            "message": "trace export failed; spans of this request are dropped (next warning in a minute at the earliest)",
            "endpoint": url,
            "error": problem,
        })
    );
}

/// `OTEL_EXPORTER_OTLP_ENDPOINT` semantics: a base URL to which `/v1/traces` is added,
/// unless it already names the traces path; empty: tracing off.
pub fn traces_url(endpoint: &str) -> Result<String, kg_url::UrlError> {
    if endpoint.trim().is_empty() {
        return Ok(String::new());
    }
    let url = kg_url::http_base("otel_exporter_otlp_endpoint", endpoint)?;
    let base = url.as_str().trim_end_matches('/');
    Ok(if base.ends_with("/v1/traces") {
        base.to_string()
    } else {
        format!("{base}/v1/traces")
    })
}

/// `OTEL_EXPORTER_OTLP_HEADERS` syntax: `key=value` pairs separated by commas, values
/// percent-encoded (e.g. `authorization=Basic%20cGs6c2s=`). Malformed pairs are skipped.
pub fn parse_headers(text: &str) -> Vec<(String, String)> {
    text.split(',')
        .filter_map(|pair| {
            let (key, value) = pair.split_once('=')?;
            let key = key.trim().to_ascii_lowercase();
            let value = percent_decode(value.trim())?;
            let sane = !key.is_empty()
                && key
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
                && !value.bytes().any(|b| b == b'\r' || b == b'\n');
            sane.then_some((key, value))
        })
        .collect()
}

fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_gets_the_traces_path_once() {
        let url = |endpoint| traces_url(endpoint).unwrap();
        assert_eq!(url(""), "");
        assert_eq!(
            url("http://collector:4318/"),
            "http://collector:4318/v1/traces"
        );
        assert_eq!(
            url("https://cloud.langfuse.com/api/public/otel"),
            "https://cloud.langfuse.com/api/public/otel/v1/traces"
        );
        assert_eq!(url("http://c:4318/v1/traces"), "http://c:4318/v1/traces");
        assert_eq!(url("http://[::1]:4318"), "http://[::1]:4318/v1/traces");
        let e = traces_url("collector:4318").unwrap_err().to_string();
        assert!(
            e.starts_with("variable `otel_exporter_otlp_endpoint`: "),
            "{e}"
        );
    }

    #[test]
    fn headers_follow_the_otel_syntax() {
        assert_eq!(
            parse_headers("Authorization=Basic%20cGs6c2s=, x-team = a ,bad, =x,evil=a%0d%0ab"),
            vec![
                ("authorization".to_string(), "Basic cGs6c2s=".to_string()),
                ("x-team".to_string(), "a".to_string()),
            ]
        );
        assert!(parse_headers("").is_empty());
    }
}
