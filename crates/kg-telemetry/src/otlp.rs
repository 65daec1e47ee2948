//! OTLP/HTTP JSON: the body of `POST /v1/traces` (`ExportTraceServiceRequest` in the
//! protobuf JSON mapping: ids as hex, 64-bit integers as strings, enums as numbers).
//! Every OpenTelemetry collector, Jaeger, Tempo, Langfuse and Phoenix accept it with
//! `content-type: application/json`.

use crate::span::{SpanData, Status, Value};
use serde_json::{Map, Value as Json, json};

/// The `spans` array for `spans`: what a component hands the dispatcher.
pub fn encode_spans(spans: &[SpanData]) -> String {
    Json::Array(spans.iter().map(span).collect()).to_string()
}

/// The export request: this service's `spans`, plus spans other components encoded with
/// [`encode_spans`] (an array that does not parse is skipped), under one resource.
pub fn export_request(
    service_name: &str,
    service_version: &str,
    spans: &[SpanData],
    encoded: &[String],
) -> String {
    let mut all: Vec<Json> = spans.iter().map(span).collect();
    for array in encoded {
        if let Ok(Json::Array(more)) = serde_json::from_str::<Json>(array) {
            all.extend(more);
        }
    }
    json!({
        "resourceSpans": [{
            "resource": {"attributes": [
                attribute("service.name", &Value::from(service_name)),
                attribute("service.version", &Value::from(service_version)),
                attribute("telemetry.sdk.name", &Value::from("kg-telemetry")),
                attribute("telemetry.sdk.language", &Value::from("rust")),
            ]},
            "scopeSpans": [{
                "scope": {"name": "kg-agent", "version": service_version},
                "spans": all,
            }],
        }]
    })
    .to_string()
}

fn span(s: &SpanData) -> Json {
    let mut out = Map::new();
    out.insert("traceId".into(), json!(s.trace_id.to_string()));
    out.insert("spanId".into(), json!(s.span_id.to_string()));
    if let Some(parent) = s.parent_span_id {
        out.insert("parentSpanId".into(), json!(parent.to_string()));
    }
    if let Some(state) = &s.trace_state {
        out.insert("traceState".into(), json!(state));
    }
    out.insert("name".into(), json!(s.name));
    out.insert("kind".into(), json!(s.kind.otlp()));
    out.insert(
        "startTimeUnixNano".into(),
        json!(s.start_unix_nano.to_string()),
    );
    out.insert("endTimeUnixNano".into(), json!(s.end_unix_nano.to_string()));
    out.insert(
        "attributes".into(),
        Json::Array(s.attributes.iter().map(|(k, v)| attribute(k, v)).collect()),
    );
    // Status codes: 0 unset, 1 ok, 2 error.
    let status = match &s.status {
        Status::Unset => json!({"code": 0}),
        Status::Ok => json!({"code": 1}),
        Status::Error(message) => json!({"code": 2, "message": message}),
    };
    out.insert("status".into(), status);
    Json::Object(out)
}

fn attribute(key: &str, value: &Value) -> Json {
    json!({"key": key, "value": any_value(value)})
}

fn any_value(value: &Value) -> Json {
    match value {
        Value::Str(s) => json!({"stringValue": s}),
        Value::Int(n) => json!({"intValue": n.to_string()}),
        // JSON has no NaN or infinity; the protobuf JSON mapping spells them as strings.
        Value::Float(f) if f.is_finite() => json!({"doubleValue": f}),
        Value::Float(f) if f.is_nan() => json!({"doubleValue": "NaN"}),
        Value::Float(f) if *f > 0.0 => json!({"doubleValue": "Infinity"}),
        Value::Float(_) => json!({"doubleValue": "-Infinity"}),
        Value::Bool(b) => json!({"boolValue": b}),
        Value::StrArray(items) => json!({"arrayValue": {"values": items
            .iter()
            .map(|s| json!({"stringValue": s}))
            .collect::<Vec<_>>()}}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{SpanId, TraceId};
    use crate::span::SpanKind;

    fn sample() -> SpanData {
        SpanData {
            trace_id: TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").expect("hex"),
            span_id: SpanId::from_hex("00f067aa0ba902b7").expect("hex"),
            parent_span_id: None,
            trace_state: None,
            name: "chat qwen".into(),
            kind: SpanKind::Client,
            start_unix_nano: 1_700_000_000_000_000_000,
            end_unix_nano: 1_700_000_000_500_000_000,
            attributes: vec![
                ("gen_ai.usage.input_tokens".into(), Value::Int(12)),
                (
                    "gen_ai.response.finish_reasons".into(),
                    Value::StrArray(vec!["stop".into()]),
                ),
            ],
            status: Status::Error("boom".into()),
        }
    }

    #[test]
    fn request_follows_the_protobuf_json_mapping() {
        let body = export_request("kg-agent", "0.1.0", &[sample()], &[]);
        let json: Json = serde_json::from_str(&body).expect("json");
        let s = &json["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
        assert_eq!(s["traceId"], "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(s["spanId"], "00f067aa0ba902b7");
        assert!(s.get("parentSpanId").is_none());
        assert_eq!(s["kind"], 3);
        assert_eq!(s["startTimeUnixNano"], "1700000000000000000");
        assert_eq!(s["attributes"][0]["value"]["intValue"], "12");
        assert_eq!(
            s["attributes"][1]["value"]["arrayValue"]["values"][0]["stringValue"],
            "stop"
        );
        assert_eq!(s["status"]["code"], 2);
        assert_eq!(
            json["resourceSpans"][0]["resource"]["attributes"][0]["value"]["stringValue"],
            "kg-agent"
        );
    }

    #[test]
    fn spans_from_other_components_are_merged_and_broken_arrays_skipped() {
        let theirs = encode_spans(&[sample(), sample()]);
        let body = export_request(
            "kg-agent",
            "0.1.0",
            &[sample()],
            &[theirs, "not json".into()],
        );
        let json: Json = serde_json::from_str(&body).expect("json");
        let spans = json["resourceSpans"][0]["scopeSpans"][0]["spans"]
            .as_array()
            .expect("array");
        assert_eq!(spans.len(), 3);
    }
}
