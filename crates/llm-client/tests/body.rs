//! The body written straight into bytes is, byte for byte, what the `serde_json::Value`
//! tree the client built before printed (keys sorted, compact), for any request.

use llm_client::{ChatRequest, Message, ToolCall, ToolChoice, ToolSpec, Tools};
use proptest::prelude::*;
use serde_json::{Map, Value as Json, json};

/// The body as the client built it before writing it directly (the reference).
fn reference(request: &ChatRequest, model: &str, stream: bool) -> String {
    let message = |m: &Message| {
        let mut object = Map::new();
        object.insert("role".into(), json!(m.role.as_str()));
        object.insert(
            "content".into(),
            m.content.clone().map_or(Json::Null, Json::String),
        );
        if !m.tool_calls.is_empty() {
            let calls: Vec<Json> = m
                .tool_calls
                .iter()
                .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}))
                .collect();
            object.insert("tool_calls".into(), Json::Array(calls));
        }
        if let Some(id) = &m.tool_call_id {
            object.insert("tool_call_id".into(), json!(id));
        }
        Json::Object(object)
    };
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert(
        "messages".into(),
        Json::Array(request.messages.iter().map(message).collect()),
    );
    if !request.tools.is_empty() {
        let tools: Vec<Json> = request
            .tools
            .iter()
            .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": serde_json::from_str::<serde_json::Value>(&t.parameters).unwrap()}}))
            .collect();
        body.insert("tools".into(), Json::Array(tools));
        if let Some(choice) = &request.tool_choice {
            let value = match choice {
                ToolChoice::Auto => json!("auto"),
                ToolChoice::None => json!("none"),
                ToolChoice::Required => json!("required"),
                ToolChoice::Function(name) => {
                    json!({"type": "function", "function": {"name": name}})
                }
            };
            body.insert("tool_choice".into(), value);
        }
    }
    if request.response_format == llm_client::ResponseFormat::JsonObject {
        body.insert("response_format".into(), json!({"type": "json_object"}));
    }
    if let Some(t) = request.temperature.filter(|t| t.is_finite()) {
        body.insert("temperature".into(), json!(t));
    }
    if let Some(n) = request.max_tokens {
        body.insert("max_tokens".into(), json!(n));
    }
    body.insert("stream".into(), json!(stream));
    if stream {
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    Json::Object(body).to_string()
}

fn text() -> impl Strategy<Value = String> {
    // Quotes, backslashes, control characters and non-ASCII: what escaping must handle.
    "[a-z \"\\\\\n\t\r\u{1}\u{8}\u{c}\u{1f}\u{7f}é中]{0,24}"
}

fn message() -> impl Strategy<Value = Message> {
    let call = (text(), text(), text()).prop_map(|(id, name, arguments)| ToolCall {
        id,
        name,
        arguments,
    });
    prop_oneof![
        text().prop_map(Message::system),
        text().prop_map(Message::user),
        text().prop_map(Message::assistant),
        (
            proptest::option::of(text()),
            proptest::collection::vec(call, 1..3)
        )
            .prop_map(|(content, calls)| Message::assistant_tool_calls(content, calls)),
        (text(), text()).prop_map(|(id, content)| Message::tool_result(id, content)),
    ]
}

fn tool() -> impl Strategy<Value = ToolSpec> {
    (text(), text(), text()).prop_map(|(name, description, key)| ToolSpec {
        name,
        description,
        parameters: json!({"type": "object", "properties": {key: {"type": "string", "minimum": 1.5}}, "required": []}).to_string(),
    })
}

fn choice() -> impl Strategy<Value = ToolChoice> {
    prop_oneof![
        Just(ToolChoice::Auto),
        Just(ToolChoice::None),
        Just(ToolChoice::Required),
        text().prop_map(ToolChoice::Function),
    ]
}

proptest! {
    #[test]
    fn the_body_is_what_the_value_tree_printed(
        messages in proptest::collection::vec(message(), 0..5),
        tools in proptest::collection::vec(tool(), 0..3),
        choice in choice(),
        json_mode: bool,
        temperature in proptest::option::of(prop_oneof![Just(f32::NAN), -2.0f32..2.0]),
        max_tokens in proptest::option::of(0u32..100_000),
        stream: bool,
        model in text(),
    ) {
        let mut request = ChatRequest::new(messages).with_tools(tools.clone(), choice);
        if json_mode {
            request = request.json_mode();
        }
        request.temperature = temperature;
        request.max_tokens = max_tokens;
        let written = String::from_utf8(request.body_bytes(&model, stream)).unwrap();
        prop_assert_eq!(&written, &reference(&request, &model, stream));
        // Tools serialised once and shared give the same body.
        let shared = Tools::from(tools);
        let again = request.clone().with_tools(shared.clone(), request.tool_choice.clone().unwrap_or(ToolChoice::Auto));
        prop_assert_eq!(again.body_bytes(&model, stream), request.body_bytes(&model, stream));
    }
}
