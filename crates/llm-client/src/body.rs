//! The request's JSON body, written straight into bytes: no `serde_json::Value` tree is
//! built, cloned and dropped for it (in a ReAct turn that was most of the agent's own time
//! per step: every step sends the whole history and every tool's schema again). Keys come
//! in the order a `serde_json::Map` (sorted) gave them before, so bodies are unchanged.

use crate::escape;
use crate::message::{Message, Role};
use crate::request::{ChatRequest, ResponseFormat, ToolChoice, ToolSpec};
use serde_json::Value as Json;

/// `value` as JSON (a number formatted, a tree compact); strings go through
/// [`escape::string`], which writes the same bytes faster.
fn put<T: serde::Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    // Writing into a Vec cannot fail, and these values (strings, numbers, JSON trees with
    // string keys) always serialise.
    let _ = serde_json::to_writer(&mut *out, value);
}

/// One tool as the `tools` array lists it.
pub(crate) fn tool(out: &mut Vec<u8>, tool: &ToolSpec) {
    out.extend_from_slice(br#"{"function":{"description":"#);
    escape::string(out, &tool.description);
    out.extend_from_slice(br#","name":"#);
    escape::string(out, &tool.name);
    out.extend_from_slice(br#","parameters":"#);
    out.extend_from_slice(tool.parameters.as_bytes());
    out.extend_from_slice(br#"},"type":"function"}"#);
}

fn message(out: &mut Vec<u8>, m: &Message) {
    out.extend_from_slice(br#"{"content":"#);
    match &m.content {
        Some(text) => escape::string(out, text),
        // Assistant turns with only tool calls carry `content: null` (OpenAI's form).
        None => out.extend_from_slice(b"null"),
    }
    // The roles need no escaping.
    out.extend_from_slice(match m.role {
        Role::System => br#","role":"system""#.as_slice(),
        Role::User => br#","role":"user""#,
        Role::Assistant => br#","role":"assistant""#,
        Role::Tool => br#","role":"tool""#,
    });
    if let Some(id) = &m.tool_call_id {
        out.extend_from_slice(br#","tool_call_id":"#);
        escape::string(out, id);
    }
    if !m.tool_calls.is_empty() {
        out.extend_from_slice(br#","tool_calls":["#);
        for (i, c) in m.tool_calls.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(br#"{"function":{"arguments":"#);
            escape::string(out, &c.arguments);
            out.extend_from_slice(br#","name":"#);
            escape::string(out, &c.name);
            out.extend_from_slice(br#"},"id":"#);
            escape::string(out, &c.id);
            out.extend_from_slice(br#","type":"function"}"#);
        }
        out.push(b']');
    }
    out.push(b'}');
}

/// The body of `request` for `model`; `stream` adds `stream: true` and asks for usage in
/// the last chunk.
pub(crate) fn write(request: &ChatRequest, model: &str, stream: bool) -> Vec<u8> {
    let tools = request.tools.json();
    let mut out =
        Vec::with_capacity(256 + model.len() + tools.len() + messages_len(&request.messages));
    out.push(b'{');
    if let Some(n) = request.max_tokens {
        out.extend_from_slice(br#""max_tokens":"#);
        put(&mut out, &n);
        out.push(b',');
    }
    out.extend_from_slice(br#""messages":["#);
    for (i, m) in request.messages.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        message(&mut out, m);
    }
    out.extend_from_slice(br#"],"model":"#);
    escape::string(&mut out, model);
    if request.response_format == ResponseFormat::JsonObject {
        out.extend_from_slice(br#","response_format":{"type":"json_object"}"#);
    }
    out.extend_from_slice(if stream {
        br#","stream":true,"stream_options":{"include_usage":true}"#.as_slice()
    } else {
        br#","stream":false"#.as_slice()
    });
    if let Some(t) = request.temperature.filter(|t| t.is_finite()) {
        out.extend_from_slice(br#","temperature":"#);
        // As a JSON number holds it: widened to f64 (0.2 is sent as 0.20000000298023224).
        put(&mut out, &f64::from(t));
    }
    if !request.tools.is_empty() {
        if let Some(choice) = &request.tool_choice {
            out.extend_from_slice(br#","tool_choice":"#);
            match choice {
                ToolChoice::Auto => out.extend_from_slice(br#""auto""#),
                ToolChoice::None => out.extend_from_slice(br#""none""#),
                ToolChoice::Required => out.extend_from_slice(br#""required""#),
                ToolChoice::Function(name) => {
                    out.extend_from_slice(br#"{"function":{"name":"#);
                    escape::string(&mut out, name);
                    out.extend_from_slice(br#"},"type":"function"}"#);
                }
            }
        }
        out.extend_from_slice(br#","tools":"#);
        out.extend_from_slice(tools.as_bytes());
    }
    out.push(b'}');
    out
}

/// About how many bytes the messages take, to size the buffer once: their text plus a
/// quarter for escapes (tool results and arguments are JSON, whose every quote is
/// escaped) and the keys around it. Too little would copy the whole body on growing.
fn messages_len(messages: &[Message]) -> usize {
    let text = |s: &str| s.len() + s.len() / 4;
    messages
        .iter()
        .map(|m| {
            64 + m.content.as_deref().map_or(0, text)
                + m.tool_call_id.as_deref().map_or(0, text)
                + m.tool_calls
                    .iter()
                    .map(|c| 80 + text(&c.arguments) + text(&c.name) + text(&c.id))
                    .sum::<usize>()
        })
        .sum()
}

/// `value` parsed back, for callers that want the body as a tree (telemetry, tests).
pub(crate) fn tree(bytes: &[u8]) -> Json {
    serde_json::from_slice(bytes).unwrap_or(Json::Null)
}
