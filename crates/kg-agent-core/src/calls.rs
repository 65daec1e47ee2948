//! What a real model's tool calls need before they run: calls written as text turned into
//! calls ([`llm_client::recover_tool_calls`]), arguments fitted to the tool's JSON Schema
//! (numbers written as strings, `null` for an optional field, fields the tool does not
//! take, a lone value for an array), a call to a tool that was not offered or without a
//! required argument answered with an error that says what to do, and a call repeated with
//! the same arguments answered from the first one's result instead of run again.

use llm_client::{ChatResponse, ToolCall, ToolSpec};
use serde_json::{Map, Value};

/// The tool calls of a step: the structured ones, else those written in its text (which
/// then leaves the text: a preface at most). `true` when they came from the text.
pub fn step_calls(response: &mut ChatResponse, tools: &[ToolSpec]) -> bool {
    if !response.tool_calls.is_empty() {
        return false;
    }
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    match llm_client::recover_tool_calls(&response.content, &names) {
        Some(found) => {
            response.tool_calls = found.calls;
            response.content = found.text;
            true
        }
        None => false,
    }
}

/// Ids for calls that came without one (written as text, or by a server that leaves them
/// out), unique in the turn.
pub fn name_calls(calls: &mut [ToolCall], step: u32) {
    for (k, call) in calls.iter_mut().enumerate() {
        if call.id.trim().is_empty() {
            call.id = format!("call_{step}_{k}");
        }
    }
}

/// `call` checked against the tools offered: its arguments fitted to the schema (the call
/// is rewritten), or the error the model reads instead of a result.
pub fn fit_call(call: &mut ToolCall, tools: &[ToolSpec]) -> Result<(), String> {
    let Some(spec) = tools.iter().find(|t| t.name == call.name) else {
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        return Err(format!(
            "there is no tool `{}`; call one of: {}",
            call.name,
            names.join(", ")
        ));
    };
    let args = match arguments(&call.arguments) {
        Some(args) => args,
        None => {
            return Err(format!(
                "the arguments of `{}` are not a JSON object: {}",
                call.name,
                clip(&call.arguments, 200)
            ));
        }
    };
    let schema: Value = serde_json::from_str(&spec.parameters).unwrap_or(Value::Null);
    let fitted = fit(args, &schema).map_err(|e| format!("`{}`: {e}", call.name))?;
    call.arguments = Value::Object(fitted).to_string();
    Ok(())
}

/// The arguments as an object: JSON text (repaired when cut short), possibly JSON written
/// as a JSON string, or nothing at all.
fn arguments(text: &str) -> Option<Map<String, Value>> {
    if text.trim().is_empty() {
        return Some(Map::new());
    }
    let parsed = serde_json::from_str::<Value>(text)
        .ok()
        .or_else(|| llm_client::lenient_json(text))?;
    match parsed {
        Value::Object(map) => Some(map),
        Value::String(s) => match llm_client::lenient_json(&s) {
            Some(Value::Object(map)) => Some(map),
            _ => None,
        },
        Value::Null => Some(Map::new()),
        _ => None,
    }
}

fn fit(mut args: Map<String, Value>, schema: &Value) -> Result<Map<String, Value>, String> {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Ok(args);
    };
    // Arguments nested once more than they should be: {"arguments": {…}}.
    if args.len() == 1
        && !properties.contains_key("arguments")
        && let Some(Value::Object(inner)) = args.get("arguments").or_else(|| args.get("parameters"))
    {
        args = inner.clone();
    }
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
    let mut out = Map::new();
    for (key, value) in args {
        let Some(property) = properties.get(&key) else {
            if !closed {
                out.insert(key, value);
            }
            continue;
        };
        if value.is_null() && !required.contains(&key.as_str()) {
            continue;
        }
        out.insert(key, coerce(value, property));
    }
    let missing: Vec<String> = required
        .iter()
        .filter(|k| !out.contains_key(**k))
        .map(|k| {
            let kind = properties
                .get(*k)
                .and_then(|p| p.get("type"))
                .map(|t| t.to_string())
                .unwrap_or_else(|| "any".into());
            format!("`{k}` ({kind})")
        })
        .collect();
    if !missing.is_empty() {
        let known: Vec<&str> = properties.keys().map(String::as_str).collect();
        return Err(format!(
            "missing required argument {}; the arguments are: {}",
            missing.join(", "),
            known.join(", ")
        ));
    }
    Ok(out)
}

/// The types a property's schema allows.
fn types(property: &Value) -> Vec<&str> {
    match property.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// `value` turned into a type the property takes, when it plainly means one.
fn coerce(value: Value, property: &Value) -> Value {
    let allowed = types(property);
    if allowed.is_empty() {
        return value;
    }
    let is = |t: &str| allowed.contains(&t);
    match value {
        Value::String(s) if !is("string") => {
            let t = s.trim();
            if is("integer")
                && let Ok(n) = t.parse::<i64>()
            {
                return Value::from(n);
            }
            if (is("number") || is("integer"))
                && let Ok(x) = t.parse::<f64>()
                && let Some(n) = serde_json::Number::from_f64(x)
            {
                if is("integer") && x.fract() == 0.0 && x.abs() < 9e15 {
                    return Value::from(x as i64);
                }
                return Value::Number(n);
            }
            if is("boolean") {
                match t.to_ascii_lowercase().as_str() {
                    "true" | "yes" => return Value::Bool(true),
                    "false" | "no" => return Value::Bool(false),
                    _ => {}
                }
            }
            if (is("object") || is("array"))
                && let Some(v) = llm_client::lenient_json(t)
                && ((is("object") && v.is_object()) || (is("array") && v.is_array()))
            {
                return v;
            }
            if is("array") {
                return Value::Array(vec![Value::String(s)]);
            }
            Value::String(s)
        }
        Value::Number(n) if is("string") && !is("integer") && !is("number") => {
            Value::String(n.to_string())
        }
        Value::Number(n) if is("integer") && !is("number") && n.as_i64().is_none() => n
            .as_f64()
            .filter(|x| x.fract() == 0.0 && x.abs() < 9e15)
            .map(|x| Value::from(x as i64))
            .unwrap_or(Value::Number(n)),
        v @ (Value::String(_) | Value::Number(_) | Value::Bool(_))
            if is("array") && !is("string") =>
        {
            Value::Array(vec![v])
        }
        other => other,
    }
}

/// The calls made so far in a turn, to answer a repeated one from its first result.
#[derive(Debug, Default)]
pub struct Seen {
    calls: Vec<(String, Value, String)>,
}

impl Seen {
    /// The observation of an earlier identical call (same tool, same arguments).
    pub fn earlier(&self, call: &ToolCall) -> Option<&str> {
        let args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
        self.calls
            .iter()
            .find(|(name, a, _)| *name == call.name && *a == args)
            .map(|(_, _, content)| content.as_str())
    }

    pub fn record(&mut self, call: &ToolCall, content: &str) {
        let args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
        self.calls
            .push((call.name.clone(), args, content.to_string()));
    }
}

fn clip(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}…", &text[..cut])
}

/// Whether `text` (a reply so far) begins with a whole tool call written as text and then
/// goes on in prose: the call is all there is to read of it.
pub fn call_then_prose(text: &str) -> bool {
    call_then_more(text)
}

/// [`call_then_prose`], or the same call written again: small models repeat a call in one
/// reply until `max_tokens` (seen: Qwen2.5-Coder-0.5B, the same call 16 times, 768 tokens).
fn call_then_more(text: &str) -> bool {
    let trimmed = text.trim_start();
    let Some(first) = trimmed.chars().next() else {
        return false;
    };
    if !matches!(first, '{' | '<' | '`' | '[') {
        return false;
    }
    let Some(found) = llm_client::recover_tool_calls(trimmed, &[]) else {
        return false;
    };
    if let Some((last, earlier)) = found.calls.split_last()
        && earlier
            .iter()
            .any(|c| c.name == last.name && same_arguments(&c.arguments, &last.arguments))
    {
        return true;
    }
    // The prose after the call: at least a few words, and no second call starting.
    let rest = found.text.trim_start();
    rest.len() >= 12 && !rest.starts_with(['{', '[', '<', '`', ',']) && trimmed.ends_with(rest)
}

fn same_arguments(a: &str, b: &str) -> bool {
    match (
        serde_json::from_str::<Value>(a),
        serde_json::from_str::<Value>(b),
    ) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// The calls of one step without repeats (the first of each tool and arguments kept): a
/// model that wrote the same call several times in one reply means it once.
pub fn distinct(calls: &mut Vec<ToolCall>) {
    let mut kept: Vec<ToolCall> = Vec::with_capacity(calls.len());
    for call in calls.drain(..) {
        if !kept
            .iter()
            .any(|k| k.name == call.name && same_arguments(&k.arguments, &call.arguments))
        {
            kept.push(call);
        }
    }
    *calls = kept;
}

/// Holds back, while a ReAct step streams, text that may be a tool call written as text
/// (a tag, a fence, a JSON object at the start of a line), so a client never sees it;
/// whatever is held is let go at the end when it turned out to be no call.
#[derive(Debug, Default)]
pub struct Gate {
    text: String,
    /// How much of `text` went out.
    sent: usize,
    /// A call's start was seen: nothing more goes out until the end.
    holding: bool,
}

const MARKERS: &[&str] = &[
    "<tool_call",
    "<tools>",
    "<function",
    "<tool_calls",
    "```",
    "[TOOL_CALLS]",
    "<|python_tag|>",
];

impl Gate {
    /// `delta` arrived: the text that may go out now.
    pub fn push(&mut self, delta: &str) -> Option<String> {
        self.text.push_str(delta);
        if self.holding {
            return None;
        }
        let pending = &self.text[self.sent..];
        // Where the earliest possible start of a call is in the pending text.
        let mut cut = pending.len();
        for (i, c) in pending.char_indices() {
            let at_line_start = {
                let before = &self.text[..self.sent + i];
                before.trim_end_matches([' ', '\t']).is_empty()
                    || before.trim_end_matches([' ', '\t']).ends_with('\n')
            };
            let rest = &pending[i..];
            let possible = match c {
                '<' | '`' | '[' => MARKERS
                    .iter()
                    .any(|m| rest.starts_with(m) || m.starts_with(rest)),
                '{' => at_line_start,
                _ => false,
            };
            if possible {
                let confirmed = c == '{' || MARKERS.iter().any(|m| rest.starts_with(m));
                if confirmed {
                    self.holding = true;
                }
                cut = i;
                break;
            }
        }
        let out = pending[..cut].to_string();
        self.sent += cut;
        (!out.is_empty()).then_some(out)
    }

    /// The reply ended and was no call: what is still held.
    pub fn rest(&mut self) -> Option<String> {
        let out = self.text[self.sent..].to_string();
        self.sent = self.text.len();
        (!out.is_empty()).then_some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(name: &str, schema: Value) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: String::new(),
            parameters: schema.to_string(),
        }
    }

    fn tools() -> Vec<ToolSpec> {
        vec![
            spec(
                "get_instances_by_class",
                json!({"additionalProperties": false, "type": "object", "required": ["class_name"],
                  "properties": {"class_name": {"type": "string"}, "limit": {"type": ["integer", "null"]},
                  "filters": {"type": ["array", "null"]}, "include_total": {"type": "boolean"}}}),
            ),
            spec(
                "search_documents",
                json!({"type": "object", "required": ["query"], "properties": {"query": {"type": "string"}}}),
            ),
        ]
    }

    fn call(name: &str, arguments: &str) -> ToolCall {
        ToolCall {
            id: String::new(),
            name: name.into(),
            arguments: arguments.into(),
        }
    }

    #[test]
    fn arguments_are_fitted_to_the_schema() {
        let mut c = call(
            "get_instances_by_class",
            r#"{"class_name": "PurchaseOrder", "limit": "20", "include_total": "true", "colour": "red", "filters": null}"#,
        );
        fit_call(&mut c, &tools()).unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&c.arguments).unwrap(),
            json!({"class_name": "PurchaseOrder", "limit": 20, "include_total": true})
        );
        // Nested once too often, and as JSON in a string.
        let mut c = call(
            "get_instances_by_class",
            r#""{\"arguments\": {\"class_name\": \"Supplier\", \"limit\": 5.0}}""#,
        );
        fit_call(&mut c, &tools()).unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&c.arguments).unwrap(),
            json!({"class_name": "Supplier", "limit": 5})
        );
    }

    #[test]
    fn unknown_tools_and_missing_arguments_say_what_to_do() {
        let e = fit_call(&mut call("count_orders", "{}"), &tools()).unwrap_err();
        assert!(e.contains("no tool `count_orders`"), "{e}");
        assert!(
            e.contains("get_instances_by_class, search_documents"),
            "{e}"
        );
        let e = fit_call(&mut call("search_documents", r#"{"q": "x"}"#), &tools()).unwrap_err();
        assert!(e.contains("missing required argument `query`"), "{e}");
        let e = fit_call(&mut call("search_documents", "[1]"), &tools()).unwrap_err();
        assert!(e.contains("not a JSON object"), "{e}");
    }

    #[test]
    fn a_repeated_call_is_recognised_whatever_its_key_order() {
        let mut seen = Seen::default();
        seen.record(&call("search_documents", r#"{"query":"a","top_k":3}"#), "R");
        assert_eq!(
            seen.earlier(&call("search_documents", r#"{"top_k":3, "query":"a"}"#)),
            Some("R")
        );
        assert_eq!(
            seen.earlier(&call("search_documents", r#"{"query":"b"}"#)),
            None
        );
    }

    #[test]
    fn a_call_followed_by_prose_is_cut_there() {
        // Qwen2.5-Coder-0.5B on llama-server with tool_choice "required" (no grammar for
        // its template): a call, then prose until max_tokens.
        let call = r#"{"name": "get_node_statistics", "arguments": {"label": "PurchaseOrder"}}"#;
        assert!(!call_then_prose(call));
        assert!(!call_then_prose(&format!("{call}. This")));
        assert!(call_then_prose(&format!(
            "{call}. This function counts the number of PurchaseOrder entities"
        )));
        // A second call may follow the first.
        assert!(!call_then_prose(&format!(
            "{call}\n{{\"name\": \"search_in"
        )));
        // Prose first is an answer (or a preface): read to the end.
        assert!(!call_then_prose(&format!(
            "To find the number of suppliers, I'll call {call} and then count them all."
        )));
        assert!(!call_then_prose(
            "ACME has 24 orders, and that is the whole answer."
        ));
    }

    #[test]
    fn a_call_written_again_in_one_reply_is_cut_and_run_once() {
        // Qwen2.5-Coder-0.5B, step 2 of "How many purchase orders does ACME have?".
        let call =
            r#"{"name": "get_instances_by_class", "arguments": {"class_name": "PurchaseOrder"}}"#;
        assert!(!call_then_prose(&format!("{call}\n")));
        assert!(call_then_prose(&format!("{call}\n{call}")));
        assert!(call_then_prose(&format!("{call}\n{call}\n{{\"na")));
        let other =
            r#"{"name": "get_instances_by_class", "arguments": {"class_name": "Supplier"}}"#;
        assert!(!call_then_prose(&format!("{call}\n{other}")));
        let mut calls = llm_client::recover_tool_calls(&format!("{call}\n{other}\n{call}"), &[])
            .unwrap()
            .calls;
        distinct(&mut calls);
        assert_eq!(calls.len(), 2);
    }

    #[test]
    fn the_gate_holds_back_calls_written_as_text() {
        let mut gate = Gate::default();
        let mut out = String::new();
        for d in ["ACME has ", "3 orders", " <b>", "open</b>."] {
            out.extend(gate.push(d));
        }
        out.extend(gate.rest());
        assert_eq!(out, "ACME has 3 orders <b>open</b>.");

        let mut gate = Gate::default();
        let mut out = String::new();
        for d in [
            "Let me look.\n<to",
            "ol_call>\n{\"name\"",
            ": \"x\"}</tool_call>",
        ] {
            out.extend(gate.push(d));
        }
        assert_eq!(out, "Let me look.\n");

        let mut gate = Gate::default();
        assert_eq!(gate.push("{\"name\": \"x\""), None);
        let mut gate = Gate::default();
        assert_eq!(gate.push("```"), None);
        assert_eq!(gate.push("json\n{}"), None);
    }
}
