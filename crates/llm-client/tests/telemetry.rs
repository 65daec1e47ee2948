//! The LLM call's span: GenAI attributes and token counts, no content unless captured,
//! and the call's `traceparent` on the request.

mod common;

use common::{FakeClock, Scripted, golden, status};
use kg_telemetry::{Settings, SpanData, Value};
use llm_client::{ChatRequest, LlmClient, LlmConfig, Message};

fn traced_call(capture_content: bool) -> (SpanData, Option<String>) {
    let settings = Settings {
        export: true,
        capture_content,
        component: "test",
        ..Settings::default()
    };
    kg_telemetry::begin(None, None, settings);
    let clock = FakeClock::default();
    let script = Scripted::new(&clock, vec![status(200, &golden("chat_text.json"))]);
    let client = LlmClient::with_clock(
        LlmConfig::new("http://llm:11434/v1", "m"),
        &script,
        clock.clone(),
    );
    client
        .chat(&ChatRequest::new(vec![Message::user("a secret question")]).max_tokens(64))
        .expect("answer");
    let sent = script.requests.borrow()[0]
        .header("traceparent")
        .map(str::to_string);
    let mut spans = kg_telemetry::take_finished();
    assert_eq!(spans.len(), 1);
    (spans.remove(0), sent)
}

fn attribute<'a>(span: &'a SpanData, key: &str) -> Option<&'a Value> {
    span.attributes
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v)
}

#[test]
fn a_call_records_genai_attributes_and_sends_its_own_span_as_parent() {
    let (span, traceparent) = traced_call(false);
    assert_eq!(span.name, "chat m");
    assert_eq!(
        attribute(&span, "gen_ai.operation.name"),
        Some(&Value::from("chat"))
    );
    assert_eq!(
        attribute(&span, "gen_ai.request.model"),
        Some(&Value::from("m"))
    );
    assert_eq!(
        attribute(&span, "gen_ai.request.max_tokens"),
        Some(&Value::Int(64))
    );
    assert_eq!(
        attribute(&span, "server.address"),
        Some(&Value::from("llm"))
    );
    assert!(matches!(attribute(&span, "gen_ai.usage.input_tokens"), Some(Value::Int(n)) if *n > 0));
    assert!(
        matches!(attribute(&span, "gen_ai.usage.output_tokens"), Some(Value::Int(n)) if *n > 0)
    );
    assert!(attribute(&span, "gen_ai.response.finish_reasons").is_some());
    assert!(attribute(&span, "gen_ai.input.messages").is_none());
    assert!(attribute(&span, "gen_ai.output.messages").is_none());
    let expected = format!("00-{}-{}-01", span.trace_id, span.span_id);
    assert_eq!(traceparent, Some(expected));
}

#[test]
fn content_is_recorded_only_when_captured() {
    let (span, _) = traced_call(true);
    match attribute(&span, "gen_ai.input.messages") {
        Some(Value::Str(text)) => assert!(text.contains("a secret question")),
        other => panic!("input messages: {other:?}"),
    }
    assert!(attribute(&span, "gen_ai.output.messages").is_some());
}
