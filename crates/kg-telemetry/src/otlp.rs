//! OTLP/HTTP JSON: the body of `POST /v1/traces` (`ExportTraceServiceRequest` in the
//! protobuf JSON mapping: ids as hex, 64-bit integers as strings, enums as numbers).
//! Every OpenTelemetry collector, Jaeger, Tempo, Langfuse and Phoenix accept it with
//! `content-type: application/json`.

use crate::span::{SpanData, Status, Value};
use serde_json::Value as Json;

/// The `spans` array for `spans`: what a component hands the dispatcher.
pub fn encode_spans(spans: &[SpanData]) -> String {
    let mut out = String::with_capacity(spans.len() * 512);
    out.push('[');
    for (i, s) in spans.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_span(&mut out, s);
    }
    out.push(']');
    out
}

/// The export request: this service's `spans`, plus spans other components encoded with
/// [`encode_spans`] (an array that does not parse is skipped), under one resource.
pub fn export_request(
    service_name: &str,
    service_version: &str,
    spans: &[SpanData],
    encoded: &[String],
) -> String {
    let mut out = String::with_capacity(1024 + spans.len() * 512);
    out.push_str(r#"{"resourceSpans":[{"resource":{"attributes":["#);
    let resource = [
        ("service.name", service_name),
        ("service.version", service_version),
        ("telemetry.sdk.name", "kg-telemetry"),
        ("telemetry.sdk.language", "rust"),
    ];
    for (i, (key, value)) in resource.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_attribute(&mut out, key, &Value::from(*value));
    }
    out.push_str(r#"]},"scopeSpans":[{"scope":{"name":"kg-agent","version":"#);
    write_str(&mut out, service_version);
    out.push_str(r#"},"spans":["#);
    let mut first = true;
    for s in spans {
        if !first {
            out.push(',');
        }
        first = false;
        write_span(&mut out, s);
    }
    for array in encoded {
        // Another component's array is checked before it is spliced in: one broken
        // array must not make the collector refuse the whole request.
        let inner = array.trim();
        let valid = matches!(serde_json::from_str::<Json>(inner), Ok(Json::Array(_)));
        let inner = inner
            .strip_prefix('[')
            .and_then(|rest| rest.strip_suffix(']'))
            .map(str::trim)
            .unwrap_or_default();
        if valid && !inner.is_empty() {
            if !first {
                out.push(',');
            }
            first = false;
            out.push_str(inner);
        }
    }
    out.push_str("]}]}]}");
    out
}

fn write_span(out: &mut String, s: &SpanData) {
    use std::fmt::Write;
    let _ = write!(
        out,
        r#"{{"traceId":"{}","spanId":"{}""#,
        s.trace_id, s.span_id
    );
    if let Some(parent) = s.parent_span_id {
        let _ = write!(out, r#","parentSpanId":"{parent}""#);
    }
    if let Some(state) = &s.trace_state {
        out.push_str(r#","traceState":"#);
        write_str(out, state);
    }
    out.push_str(r#","name":"#);
    write_str(out, &s.name);
    let _ = write!(
        out,
        r#","kind":{},"startTimeUnixNano":"{}","endTimeUnixNano":"{}","attributes":["#,
        s.kind.otlp(),
        s.start_unix_nano,
        s.end_unix_nano
    );
    for (i, (key, value)) in s.attributes.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_attribute(out, key, value);
    }
    // Status codes: 0 unset, 1 ok, 2 error.
    match &s.status {
        Status::Unset => out.push_str(r#"],"status":{"code":0}}"#),
        Status::Ok => out.push_str(r#"],"status":{"code":1}}"#),
        Status::Error(message) => {
            out.push_str(r#"],"status":{"code":2,"message":"#);
            write_str(out, message);
            out.push_str("}}");
        }
    }
}

fn write_attribute(out: &mut String, key: &str, value: &Value) {
    out.push_str(r#"{"key":"#);
    write_str(out, key);
    out.push_str(r#","value":"#);
    write_any_value(out, value);
    out.push('}');
}

fn write_any_value(out: &mut String, value: &Value) {
    use std::fmt::Write;
    match value {
        Value::Str(s) => {
            out.push_str(r#"{"stringValue":"#);
            write_str(out, s);
            out.push('}');
        }
        Value::Int(n) => {
            let _ = write!(out, r#"{{"intValue":"{n}"}}"#);
        }
        // JSON has no NaN or infinity; the protobuf JSON mapping spells them as strings.
        Value::Float(f) if f.is_finite() => {
            out.push_str(r#"{"doubleValue":"#);
            out.push_str(&Json::from(*f).to_string());
            out.push('}');
        }
        Value::Float(f) if f.is_nan() => out.push_str(r#"{"doubleValue":"NaN"}"#),
        Value::Float(f) if *f > 0.0 => out.push_str(r#"{"doubleValue":"Infinity"}"#),
        Value::Float(_) => out.push_str(r#"{"doubleValue":"-Infinity"}"#),
        Value::Bool(b) => {
            let _ = write!(out, r#"{{"boolValue":{b}}}"#);
        }
        Value::StrArray(items) => {
            out.push_str(r#"{"arrayValue":{"values":["#);
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(r#"{"stringValue":"#);
                write_str(out, item);
                out.push('}');
            }
            out.push_str("]}}");
        }
    }
}

/// A JSON string literal (RFC 8259 escapes).
fn write_str(out: &mut String, text: &str) {
    use std::fmt::Write;
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
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
    fn strings_are_escaped_and_every_value_kind_round_trips() {
        let mut span = sample();
        span.name = "quote \" backslash \\ newline \n control \u{1} 中文".into();
        span.trace_state = Some("k=v".into());
        span.parent_span_id = SpanId::from_hex("1111111111111111");
        span.attributes = vec![
            ("s".into(), Value::from("x")),
            ("i".into(), Value::Int(-7)),
            ("f".into(), Value::Float(0.25)),
            ("nan".into(), Value::Float(f64::NAN)),
            ("b".into(), Value::Bool(true)),
            ("a".into(), Value::StrArray(vec!["p".into(), "q".into()])),
        ];
        span.status = Status::Ok;
        let json: Json =
            serde_json::from_str(&encode_spans(&[span.clone(), span.clone()])).expect("valid JSON");
        let s = &json[1];
        assert_eq!(s["name"], span.name.as_str());
        assert_eq!(s["parentSpanId"], "1111111111111111");
        assert_eq!(s["traceState"], "k=v");
        let values: Vec<&Json> = s["attributes"]
            .as_array()
            .expect("attributes")
            .iter()
            .map(|a| &a["value"])
            .collect();
        assert_eq!(values[0]["stringValue"], "x");
        assert_eq!(values[1]["intValue"], "-7");
        assert_eq!(values[2]["doubleValue"], 0.25);
        assert_eq!(values[3]["doubleValue"], "NaN");
        assert_eq!(values[4]["boolValue"], true);
        assert_eq!(values[5]["arrayValue"]["values"][1]["stringValue"], "q");
        assert_eq!(s["status"]["code"], 1);
        assert_eq!(encode_spans(&[]), "[]");
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
