//! An OTLP/HTTP trace receiver for the tests: accepts `POST /v1/traces` (JSON) and decodes
//! what it received into the OTLP JSON shape (the protobuf JSON mapping of
//! `ExportTraceServiceRequest`), with its own serde types, independent of the encoder's.
//! Unknown fields are refused, so a misspelt field name fails a test instead of being
//! silently dropped the way a collector would drop it.

use serde::Deserialize;
use std::collections::BTreeMap;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExportTraceServiceRequest {
    pub resource_spans: Vec<ResourceSpans>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResourceSpans {
    pub resource: Resource,
    pub scope_spans: Vec<ScopeSpans>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Resource {
    pub attributes: Vec<KeyValue>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScopeSpans {
    pub scope: Scope,
    pub spans: Vec<Span>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Scope {
    pub name: String,
    #[serde(default)]
    pub version: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Span {
    pub trace_id: String,
    pub span_id: String,
    #[serde(default)]
    pub parent_span_id: String,
    #[serde(default)]
    pub trace_state: String,
    pub name: String,
    pub kind: u8,
    pub start_time_unix_nano: String,
    pub end_time_unix_nano: String,
    #[serde(default)]
    pub attributes: Vec<KeyValue>,
    #[serde(default)]
    pub status: Status,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Status {
    #[serde(default)]
    pub code: u8,
    #[serde(default)]
    pub message: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KeyValue {
    pub key: String,
    pub value: AnyValue,
}

/// One of the fields is set (protobuf `oneof`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub enum AnyValue {
    StringValue(String),
    BoolValue(bool),
    /// int64 in the JSON mapping: a string (a number is accepted too by collectors).
    IntValue(serde_json::Value),
    DoubleValue(f64),
    ArrayValue(ArrayValue),
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ArrayValue {
    pub values: Vec<AnyValue>,
}

impl Span {
    pub fn attribute(&self, key: &str) -> Option<&AnyValue> {
        self.attributes
            .iter()
            .find(|a| a.key == key)
            .map(|a| &a.value)
    }

    pub fn str(&self, key: &str) -> Option<&str> {
        match self.attribute(key)? {
            AnyValue::StringValue(s) => Some(s),
            _ => None,
        }
    }

    pub fn int(&self, key: &str) -> Option<i64> {
        match self.attribute(key)? {
            AnyValue::IntValue(serde_json::Value::String(s)) => s.parse().ok(),
            AnyValue::IntValue(serde_json::Value::Number(n)) => n.as_i64(),
            _ => None,
        }
    }

    pub fn start_nanos(&self) -> u128 {
        self.start_time_unix_nano.parse().unwrap_or(0)
    }

    pub fn end_nanos(&self) -> u128 {
        self.end_time_unix_nano.parse().unwrap_or(0)
    }
}

/// A collector on a free port.
pub struct Receiver {
    pub server: MockServer,
}

impl Receiver {
    pub async fn start() -> Receiver {
        Self::answering(ResponseTemplate::new(200).set_body_string("{}")).await
    }

    /// A collector that answers `/v1/traces` with `response` (a delay, an error status).
    pub async fn answering(response: ResponseTemplate) -> Receiver {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/v1/traces"))
            .respond_with(response)
            .mount(&server)
            .await;
        Receiver { server }
    }

    /// The variables that point the application at this collector.
    pub fn variables(&self) -> Vec<(&'static str, String)> {
        vec![
            ("otel_exporter_otlp_endpoint", self.server.uri()),
            ("otel_exporter_otlp_origin", self.server.uri()),
            (
                "otel_exporter_otlp_headers",
                "x-collector-key=s3cret%20key".to_string(),
            ),
        ]
    }

    /// Every export request received so far, decoded; panics on one that does not decode
    /// or was not sent as OTLP JSON with the configured header.
    pub async fn exports(&self) -> Vec<ExportTraceServiceRequest> {
        let requests = self.server.received_requests().await.unwrap_or_default();
        requests
            .iter()
            .filter(|r| r.url.path() == "/v1/traces")
            .map(|r| {
                let header = |name: &str| {
                    r.headers
                        .get(name)
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or_default()
                        .to_string()
                };
                assert_eq!(header("content-type"), "application/json");
                assert_eq!(header("x-collector-key"), "s3cret key");
                assert!(header("traceparent").is_empty(), "an export is not traced");
                serde_json::from_slice(&r.body).unwrap_or_else(|e| {
                    panic!(
                        "undecodable OTLP: {e}: {}",
                        String::from_utf8_lossy(&r.body)
                    )
                })
            })
            .collect()
    }

    /// Every span received, by trace id.
    pub async fn traces(&self) -> BTreeMap<String, Vec<Span>> {
        let mut traces: BTreeMap<String, Vec<Span>> = BTreeMap::new();
        for export in self.exports().await {
            for resource in export.resource_spans {
                for scope in resource.scope_spans {
                    for span in scope.spans {
                        traces.entry(span.trace_id.clone()).or_default().push(span);
                    }
                }
            }
        }
        traces
    }

    /// The spans of one trace, waiting up to 5 s for its export (it follows the response).
    pub async fn trace(&self, trace_id: &str) -> Vec<Span> {
        for _ in 0..100 {
            if let Some(spans) = self.traces().await.remove(trace_id) {
                return spans;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        panic!("no spans of trace {trace_id} within 5 s");
    }
}
