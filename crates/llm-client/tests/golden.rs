//! Requests and answers checked against recorded OpenAI-format documents.

mod common;

use common::{FakeClock, Scripted, golden, sse, status};
use llm_client::{
    ChatRequest, LlmClient, LlmConfig, Message, StreamEvent, ToolCall, ToolChoice, ToolSpec, Usage,
};
use serde_json::{Value as Json, json};

fn client<'a>(script: &'a Scripted, clock: &FakeClock) -> LlmClient<&'a Scripted, FakeClock> {
    let mut config = LlmConfig::new("http://llm:11434/v1/", "m");
    config.api_key = Some("sk-test".into());
    LlmClient::with_clock(config, script, clock.clone())
}

#[test]
fn request_body_carries_messages_tools_choice_json_mode_and_sampling() {
    let clock = FakeClock::default();
    let script = Scripted::new(&clock, vec![status(200, &golden("chat_text.json"))]);
    let request = ChatRequest::new(vec![
        Message::system("You answer over a graph."),
        Message::user("How many orders has ACME?"),
        Message::assistant_tool_calls(
            None,
            vec![ToolCall {
                id: "call_a".into(),
                name: "search_instances".into(),
                arguments: r#"{"search_term":"acme"}"#.into(),
            }],
        ),
        Message::tool_result("call_a", r#"{"count": 24}"#),
    ])
    .with_tools(
        vec![ToolSpec {
            name: "search_instances".into(),
            description: "Find entities by name".into(),
            parameters: json!({"type": "object", "properties": {"search_term": {"type": "string"}}, "required": ["search_term"]}).to_string(),
        }],
        ToolChoice::Auto,
    )
    .json_mode()
    .temperature(0.0)
    .max_tokens(256);
    client(&script, &clock).chat(&request).unwrap();
    let expected: Json = serde_json::from_str(&golden("request_tools.json")).unwrap();
    assert_eq!(script.body(0), expected);
    let sent = &script.requests.borrow()[0];
    assert_eq!(sent.url, "http://llm:11434/v1/chat/completions");
    assert_eq!(sent.header("authorization"), Some("Bearer sk-test"));
    assert_eq!(sent.header("content-type"), Some("application/json"));
}

#[test]
fn forced_function_and_no_key_means_no_authorization() {
    let clock = FakeClock::default();
    let script = Scripted::new(&clock, vec![status(200, &golden("chat_text.json"))]);
    let request = ChatRequest::new(vec![Message::user("x")]).with_tools(
        vec![ToolSpec {
            name: "f".into(),
            description: "d".into(),
            parameters: json!({"type": "object"}).to_string(),
        }],
        ToolChoice::Function("f".into()),
    );
    let mut config = LlmConfig::new("http://llm:1/v1", "m");
    config.api_key = Some(String::new());
    LlmClient::with_clock(config, &script, clock.clone())
        .chat(&request)
        .unwrap();
    let body = script.body(0);
    assert_eq!(
        body["tool_choice"],
        json!({"type": "function", "function": {"name": "f"}})
    );
    assert!(body.get("response_format").is_none());
    assert!(body.get("temperature").is_none());
    assert!(
        script.requests.borrow()[0]
            .header("authorization")
            .is_none()
    );
}

#[test]
fn text_answer_with_usage() {
    let clock = FakeClock::default();
    let script = Scripted::new(&clock, vec![status(200, &golden("chat_text.json"))]);
    let answer = client(&script, &clock)
        .chat(&ChatRequest::new(vec![Message::user("ACME?")]))
        .unwrap();
    assert_eq!(answer.content, "ACME 有 24 个订单。");
    assert!(answer.tool_calls.is_empty());
    assert_eq!(answer.finish_reason.as_deref(), Some("stop"));
    assert_eq!(
        answer.usage,
        Some(Usage {
            prompt_tokens: 57,
            completion_tokens: 12
        })
    );
    assert_eq!(answer.model.as_deref(), Some("qwen2.5:7b-instruct"));
}

#[test]
fn parallel_tool_calls_in_one_answer() {
    let clock = FakeClock::default();
    let script = Scripted::new(&clock, vec![status(200, &golden("chat_tool_calls.json"))]);
    let answer = client(&script, &clock)
        .chat(&ChatRequest::new(vec![Message::user("ACME?")]))
        .unwrap();
    assert_eq!(answer.content, "");
    assert_eq!(answer.finish_reason.as_deref(), Some("tool_calls"));
    let names: Vec<&str> = answer.tool_calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["search_instances", "get_node_statistics"]);
    assert_eq!(answer.tool_calls[0].id, "call_a");
    assert_eq!(
        answer.tool_calls[1].arguments_json().unwrap(),
        json!({"label": "PurchaseOrder"})
    );
}

#[test]
fn streamed_text_deltas_in_order_with_usage() {
    let clock = FakeClock::default();
    let script = Scripted::new(&clock, vec![sse(&golden("stream_text.sse"))]);
    let mut events = vec![];
    let answer = client(&script, &clock)
        .chat_stream(&ChatRequest::new(vec![Message::user("ACME?")]), |e| {
            events.push(e.clone())
        })
        .unwrap();
    assert_eq!(script.body(0)["stream"], json!(true));
    assert_eq!(
        script.body(0)["stream_options"],
        json!({"include_usage": true})
    );
    assert_eq!(answer.content, "供应商 ACME has 24 orders.");
    let deltas: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Content(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(deltas, ["供应商", " ACME", " has 24 orders."]);
    assert_eq!(
        answer.usage,
        Some(Usage {
            prompt_tokens: 20,
            completion_tokens: 7
        })
    );
    assert!(events.contains(&StreamEvent::Finished {
        reason: "stop".into()
    }));
}

#[test]
fn streamed_parallel_tool_calls_are_assembled_from_interleaved_fragments() {
    let clock = FakeClock::default();
    let script = Scripted::new(&clock, vec![sse(&golden("stream_tool_calls.sse"))]);
    let mut started = vec![];
    let answer = client(&script, &clock)
        .chat_stream(&ChatRequest::new(vec![Message::user("ACME?")]), |e| {
            if let StreamEvent::ToolCallStarted { index, name, .. } = e {
                started.push((*index, name.clone()));
            }
        })
        .unwrap();
    assert_eq!(
        started,
        [
            (0, "search_instances".to_string()),
            (1, "get_node_statistics".to_string())
        ]
    );
    assert_eq!(
        answer.tool_calls,
        vec![
            ToolCall {
                id: "call_a".into(),
                name: "search_instances".into(),
                arguments: r#"{"search_term": "acme"}"#.into(),
            },
            ToolCall {
                id: "call_b".into(),
                name: "get_node_statistics".into(),
                arguments: r#"{"label": "PurchaseOrder"}"#.into(),
            },
        ]
    );
    assert_eq!(answer.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(answer.usage.map(|u| u.completion_tokens), Some(41));
}

#[test]
fn a_server_that_ignores_stream_true_still_yields_the_answer() {
    let clock = FakeClock::default();
    let script = Scripted::new(&clock, vec![status(200, &golden("chat_text.json"))]);
    let mut deltas = vec![];
    let answer = client(&script, &clock)
        .chat_stream(&ChatRequest::new(vec![Message::user("x")]), |e| {
            deltas.push(e.clone())
        })
        .unwrap();
    assert_eq!(deltas, [StreamEvent::Content(answer.content.clone())]);
}

#[test]
fn malformed_answers_are_bad_responses() {
    for body in [
        "not json",
        r#"{"choices": []}"#,
        r#"{"choices": [{"finish_reason": "stop"}]}"#,
        r#"{"error": {"message": "model not found"}}"#,
        r#"{"choices": [{"message": {"tool_calls": [{"id": "x", "function": {"arguments": "{}"}}]}}]}"#,
    ] {
        let clock = FakeClock::default();
        let script = Scripted::new(&clock, vec![status(200, body)]);
        let e = client(&script, &clock)
            .chat(&ChatRequest::new(vec![Message::user("x")]))
            .unwrap_err();
        assert!(
            matches!(e, llm_client::LlmError::BadResponse(_)),
            "{body}: {e}"
        );
        assert!(!e.retryable());
    }
}

#[test]
fn a_stream_cut_before_its_end_is_a_bad_response() {
    let clock = FakeClock::default();
    let cut: String = golden("stream_text.sse")
        .lines()
        .take(6)
        .collect::<Vec<_>>()
        .join("\n");
    let script = Scripted::new(&clock, vec![sse(&cut)]);
    let e = client(&script, &clock)
        .chat_stream(&ChatRequest::new(vec![Message::user("x")]), |_| {})
        .unwrap_err();
    assert!(e.to_string().contains("ended before"), "{e}");
}

/// Answers recorded from llama-server (llama.cpp vendored by llama-cpp-python 0.3.36,
/// `--jinja`) with Qwen2.5-Coder Q4_K_M and two tools offered: neither model fills
/// `tool_calls`; each writes its call as text, which is read back as a call.
#[test]
fn llama_server_calls_written_as_text_are_read_as_calls() {
    let tools = ["get_node_statistics", "search_instances"];
    // 0.5B, streamed: a bare JSON call in `content`, token by token, usage at the end.
    let mut parser = llm_client::StreamParser::new();
    parser
        .feed(golden("llama_server_0.5b_call_as_content.sse").as_bytes())
        .unwrap();
    let (response, _) = parser.finish().unwrap();
    assert!(response.tool_calls.is_empty());
    assert_eq!(response.usage.map(|u| u.prompt_tokens), Some(389));
    let found = llm_client::recover_tool_calls(&response.content, &tools).unwrap();
    assert_eq!(found.calls.len(), 1);
    assert_eq!(found.calls[0].name, "get_node_statistics");
    assert_eq!(found.calls[0].arguments, r#"{"label":"Supplier"}"#);
    assert_eq!(found.text, "");

    // 0.5B with tool_choice "required": the call, then prose up to max_tokens.
    let mut parser = llm_client::StreamParser::new();
    parser
        .feed(golden("llama_server_0.5b_call_then_prose.sse").as_bytes())
        .unwrap();
    let (response, _) = parser.finish().unwrap();
    assert_eq!(response.usage.map(|u| u.completion_tokens), Some(300));
    let found = llm_client::recover_tool_calls(&response.content, &tools).unwrap();
    assert_eq!(found.calls[0].name, "get_node_statistics");
    assert!(found.text.starts_with(". This function counts"));

    // 1.5B, whole: prose around a fenced JSON call.
    let response =
        llm_client::parse_chat_response(golden("llama_server_1.5b_fenced_call.json").as_bytes())
            .unwrap();
    assert!(response.tool_calls.is_empty());
    let found = llm_client::recover_tool_calls(&response.content, &tools).unwrap();
    assert_eq!(found.calls.len(), 1);
    assert_eq!(found.calls[0].arguments, r#"{"label":"Supplier"}"#);
    assert!(found.text.starts_with("To find the number of suppliers"));
    assert!(!found.text.contains("```"));
}
