//! Tool calls that a model wrote as text instead of in `tool_calls`. Small models (and
//! servers that do not parse their model's tool-call syntax) answer a step with the call in
//! `content`: Qwen/Hermes `<tool_call>{…}</tool_call>`, a `<tools>` block, a fenced JSON
//! block, a bare `{"name": …, "arguments": …}`, Llama's `<function=name>{…}</function>`
//! or `<function name="…">`, an array of such calls, or the OpenAI shape
//! `{"function": {"name": …, "arguments": …}}`. [`recover_tool_calls`] finds them so the
//! caller runs them as calls, and never shows them to a user as an answer; JSON cut short
//! (by `max_tokens`) or with a trailing comma is repaired where its meaning is plain.

use crate::message::ToolCall;
use serde_json::{Map, Value};

/// What [`recover_tool_calls`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct Recovered {
    /// The calls, in the order written; `id` is empty (the caller names them).
    pub calls: Vec<ToolCall>,
    /// The text outside the calls, trimmed (a preface, usually empty).
    pub text: String,
}

/// Keys that name the tool in a call written as JSON.
const NAME_KEYS: &[&str] = &["name", "tool", "tool_name", "function", "function_name"];
/// Keys that hold its arguments.
const ARGUMENT_KEYS: &[&str] = &[
    "arguments",
    "parameters",
    "args",
    "input",
    "tool_input",
    "params",
];

/// The tool calls written in `content`, when there are any. `tools` are the names the
/// request offered: a bare JSON object (not in a tag or a fence) counts as a call only
/// when it names one of them or has the shape of a call (a name and arguments), so an
/// answer quoting a record is left alone. A call to a tool not offered is returned too
/// (the caller tells the model it does not exist).
pub fn recover_tool_calls(content: &str, tools: &[&str]) -> Option<Recovered> {
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let mut calls = Vec::new();
    let mut pos = 0;
    while pos < content.len() {
        let Some((start, block)) = next_block(content, pos) else {
            break;
        };
        let found = match &block.kind {
            Kind::Named(name) => {
                let args = parse_lenient(block.inner.trim()).unwrap_or(Value::Object(Map::new()));
                vec![call(name.clone(), args)]
            }
            Kind::Tagged | Kind::Fenced => values_in(block.inner)
                .into_iter()
                .flat_map(|v| calls_in(v, tools, true))
                .collect(),
        };
        if !found.is_empty() {
            calls.extend(found);
            spans.push((start, block.end));
        }
        pos = block.end.max(start + 1);
    }
    if calls.is_empty() {
        // No tag or fence held a call: bare JSON, anywhere in the text.
        let mut i = 0;
        while let Some(offset) = content[i..].find(['{', '[']) {
            let start = i + offset;
            match value_at(&content[start..]) {
                Some((value, len)) => {
                    let found = calls_in(value, tools, false);
                    if !found.is_empty() {
                        calls.extend(found);
                        spans.push((start, start + len));
                        i = start + len;
                        continue;
                    }
                }
                None if calls.is_empty() && content[..start].trim().is_empty() => {
                    // Cut short at the end of the text: the whole rest is the call.
                    if let Some(value) = repair(&content[start..]) {
                        let found = calls_in(value, tools, false);
                        if !found.is_empty() {
                            calls.extend(found);
                            spans.push((start, content.len()));
                            break;
                        }
                    }
                }
                None => {}
            }
            i = start + 1;
        }
    }
    if calls.is_empty() {
        return None;
    }
    let mut text = String::new();
    let mut last = 0;
    for (start, end) in spans {
        text.push_str(&content[last..start]);
        last = end;
    }
    text.push_str(&content[last..]);
    Some(Recovered {
        calls,
        text: text.trim().to_string(),
    })
}

/// Whether `content` looks like a tool call that [`recover_tool_calls`] could not read
/// (an unclosed or garbled `<tool_call>`): such text is no answer either.
pub fn looks_like_tool_call(content: &str) -> bool {
    let t = content.trim_start();
    [
        "<tool_call",
        "<tools>",
        "<function",
        "<|python_tag|>",
        "[TOOL_CALLS]",
    ]
    .iter()
    .any(|m| content.contains(m))
        || (t.starts_with('{') && (t.contains("\"name\"") || t.contains("\"arguments\"")))
        || (t.starts_with("```") && t.contains("\"name\""))
}

fn call(name: String, arguments: Value) -> ToolCall {
    let arguments = match arguments {
        Value::Null => "{}".to_string(),
        // Arguments written as JSON text inside the JSON.
        Value::String(s) => match parse_lenient(&s) {
            Some(v @ Value::Object(_)) => v.to_string(),
            _ => Value::String(s).to_string(),
        },
        other => other.to_string(),
    };
    ToolCall {
        id: String::new(),
        name,
        arguments,
    }
}

/// The calls `value` stands for. `strong`: it came from a tag or fence, so any object
/// with a name counts.
fn calls_in(value: Value, tools: &[&str], strong: bool) -> Vec<ToolCall> {
    match value {
        Value::Array(items) => {
            let calls: Vec<ToolCall> = items
                .into_iter()
                .flat_map(|v| calls_in(v, tools, strong))
                .collect();
            calls
        }
        Value::Object(mut map) => {
            if let Some(Value::Array(items)) = map.remove("tool_calls") {
                return items
                    .into_iter()
                    .flat_map(|v| calls_in(v, tools, true))
                    .collect();
            }
            // {"function": {"name": …, "arguments": …}} (OpenAI's shape, as text).
            if let Some(Value::Object(inner)) = map.get("function")
                && inner.get("name").is_some_and(Value::is_string)
            {
                let inner = inner.clone();
                return calls_in(Value::Object(inner), tools, true);
            }
            let name = NAME_KEYS
                .iter()
                .find_map(|k| map.get(*k).and_then(Value::as_str).map(str::to_string));
            let args_key = ARGUMENT_KEYS.iter().find(|k| map.contains_key(**k));
            match (name, args_key) {
                (Some(name), Some(key)) if is_identifier(&name) => {
                    let args = map.remove(*key).unwrap_or(Value::Null);
                    vec![call(name, args)]
                }
                (Some(name), None)
                    if tools.contains(&name.as_str()) && (strong || map.len() == 1) =>
                {
                    // {"name": "get_ontology_classes"}: a call without arguments; any
                    // other keys are its arguments written flat.
                    map.retain(|k, _| !NAME_KEYS.contains(&k.as_str()));
                    vec![call(name, Value::Object(map))]
                }
                (Some(name), None) if strong && is_identifier(&name) && map.len() == 1 => {
                    vec![call(name, Value::Object(Map::new()))]
                }
                _ => {
                    // {"search_instances": {"search_term": "ACME"}}
                    if map.len() == 1
                        && let Some((name, args)) = map.iter().next()
                        && tools.contains(&name.as_str())
                        && args.is_object()
                    {
                        return vec![call(name.clone(), args.clone())];
                    }
                    Vec::new()
                }
            }
        }
        _ => Vec::new(),
    }
}

fn is_identifier(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
}

enum Kind {
    /// `<tool_call>`, `<tools>`, `<function_call>`: JSON calls inside.
    Tagged,
    /// A fenced code block.
    Fenced,
    /// `<function=name>` / `<function name="name">`: the arguments inside.
    Named(String),
}

struct Block<'a> {
    kind: Kind,
    inner: &'a str,
    /// Where the block ends (after its closing tag or fence, or the end of the text).
    end: usize,
}

const TAGS: &[(&str, &str)] = &[
    ("<tool_call>", "</tool_call>"),
    ("<tools>", "</tools>"),
    ("<function_call>", "</function_call>"),
    ("<tool_calls>", "</tool_calls>"),
];

/// The first tag or fence at or after `from`: its start and the block.
fn next_block(content: &str, from: usize) -> Option<(usize, Block<'_>)> {
    let rest = &content[from..];
    let mut best: Option<(usize, Block<'_>)> = None;
    fn keep<'a>(best: &mut Option<(usize, Block<'a>)>, start: usize, block: Block<'a>) {
        if best.as_ref().is_none_or(|(s, _)| start < *s) {
            *best = Some((start, block));
        }
    }
    for (open, close) in TAGS {
        if let Some(i) = rest.find(open) {
            let start = from + i;
            let body = start + open.len();
            let (inner, end) = match content[body..].find(close) {
                Some(j) => (&content[body..body + j], body + j + close.len()),
                None => (&content[body..], content.len()),
            };
            keep(
                &mut best,
                start,
                Block {
                    kind: Kind::Tagged,
                    inner,
                    end,
                },
            );
        }
    }
    if let Some(i) = rest.find("<function") {
        let start = from + i;
        let tail = &content[start + "<function".len()..];
        let name = if let Some(t) = tail.strip_prefix('=') {
            t.split('>').next().map(|n| n.trim().to_string())
        } else if let Some(t) = tail.trim_start().strip_prefix("name=") {
            t.split('>')
                .next()
                .map(|n| n.trim().trim_matches(['"', '\'']).to_string())
        } else {
            None
        };
        if let Some(name) = name.filter(|n| is_identifier(n))
            && let Some(gt) = content[start..].find('>')
        {
            let body = start + gt + 1;
            let (inner, end) = match content[body..].find("</function>") {
                Some(j) => (&content[body..body + j], body + j + "</function>".len()),
                None => (&content[body..], content.len()),
            };
            keep(
                &mut best,
                start,
                Block {
                    kind: Kind::Named(name),
                    inner,
                    end,
                },
            );
        }
    }
    if let Some(i) = rest.find("```") {
        let start = from + i;
        let after = start + 3;
        // The info string (json, tool_call, …) runs to the end of the line.
        let body = content[after..]
            .find('\n')
            .map(|j| after + j + 1)
            .unwrap_or(content.len());
        let (inner, end) = match content[body..].find("```") {
            Some(j) => (&content[body..body + j], body + j + 3),
            None => (&content[body..], content.len()),
        };
        keep(
            &mut best,
            start,
            Block {
                kind: Kind::Fenced,
                inner,
                end,
            },
        );
    }
    best
}

/// The JSON values in `text`, one after another (repaired when the last is cut short).
fn values_in(text: &str) -> Vec<Value> {
    let mut values = Vec::new();
    let mut i = 0;
    while let Some(offset) = text[i..].find(['{', '[']) {
        let start = i + offset;
        match value_at(&text[start..]) {
            Some((value, len)) => {
                values.push(value);
                i = start + len;
            }
            None => {
                if let Some(value) = repair(&text[start..]) {
                    values.push(value);
                }
                break;
            }
        }
    }
    values
}

/// The JSON value at the start of `text` and its length; `None` when it is not one.
fn value_at(text: &str) -> Option<(Value, usize)> {
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    match stream.next() {
        Some(Ok(value)) => Some((value, stream.byte_offset())),
        _ => None,
    }
}

/// `text` as JSON, repaired when it is cut short or has a trailing comma.
pub fn parse_lenient(text: &str) -> Option<Value> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    serde_json::from_str(text).ok().or_else(|| repair(text))
}

/// A JSON object or array cut short (or with trailing commas) closed: an open string is
/// ended, a dangling key gets `null`, trailing commas go, and the open brackets are closed
/// in order. `None` when that does not make one JSON value.
fn repair(text: &str) -> Option<Value> {
    let mut out = String::with_capacity(text.len() + 8);
    let mut stack = Vec::new();
    let (mut in_string, mut escaped) = (false, false);
    for c in text.chars() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' => stack.push('}'),
            '[' => stack.push(']'),
            '}' | ']' => {
                // A comma before a closing bracket is dropped.
                let trimmed = out.trim_end().len();
                if out[..trimmed].ends_with(',') {
                    out.truncate(trimmed - 1);
                }
                if stack.pop() != Some(c) {
                    return None;
                }
                out.push(c);
                if stack.is_empty() {
                    break;
                }
                continue;
            }
            _ => {}
        }
        out.push(c);
    }
    if escaped {
        out.pop();
    }
    if in_string {
        out.push('"');
    }
    let trimmed = out.trim_end().len();
    out.truncate(trimmed);
    if out.ends_with(',') {
        out.pop();
    }
    if out.ends_with(':') {
        out.push_str("null");
    }
    while let Some(close) = stack.pop() {
        out.push(close);
    }
    serde_json::from_str(&out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOOLS: &[&str] = &["search_instances", "get_node_statistics", "describe_class"];

    fn names(r: &Recovered) -> Vec<(&str, Value)> {
        r.calls
            .iter()
            .map(|c| {
                (
                    c.name.as_str(),
                    serde_json::from_str(&c.arguments).unwrap_or(Value::Null),
                )
            })
            .collect()
    }

    #[test]
    fn plain_answers_are_not_calls() {
        for text in [
            "ACME has 5 orders: 2 paid, 3 open.",
            "The supplier is {\"name\": \"ACME\", \"country\": \"US\"}.",
            "你好！我是 kg-agent。",
            "Use `search_instances` to find it.",
            "",
        ] {
            assert_eq!(recover_tool_calls(text, TOOLS), None, "{text}");
        }
    }

    #[test]
    fn tool_call_tags() {
        let r = recover_tool_calls(
            "<tool_call>\n{\"name\": \"search_instances\", \"arguments\": {\"search_term\": \"ACME\"}}\n</tool_call>",
            TOOLS,
        )
        .unwrap();
        assert_eq!(
            names(&r),
            vec![(
                "search_instances",
                serde_json::json!({"search_term": "ACME"})
            )]
        );
        assert_eq!(r.text, "");
        // Two calls, and an unclosed last tag cut short by max_tokens.
        let r = recover_tool_calls(
            "Let me look.\n<tool_call>{\"name\": \"get_node_statistics\", \"arguments\": {}}</tool_call>\n<tool_call>{\"name\": \"search_instances\", \"arguments\": {\"search_term\": \"AC",
            TOOLS,
        )
        .unwrap();
        assert_eq!(r.calls.len(), 2);
        assert_eq!(r.calls[1].arguments, r#"{"search_term":"AC"}"#);
        assert_eq!(r.text, "Let me look.");
    }

    #[test]
    fn tools_blocks_fences_and_bare_json() {
        let tools = "<tools>\n{\"name\": \"describe_class\", \"parameters\": {\"class_name\": \"Supplier\"}}\n</tools>";
        let fenced = "```json\n{\n  \"name\": \"describe_class\",\n  \"arguments\": {\"class_name\": \"Supplier\"}\n}\n```";
        let bare = "{\"name\": \"describe_class\", \"arguments\": {\"class_name\": \"Supplier\"}}";
        let openai = "{\"type\": \"function\", \"function\": {\"name\": \"describe_class\", \"arguments\": \"{\\\"class_name\\\": \\\"Supplier\\\"}\"}}";
        let keyed = "{\"describe_class\": {\"class_name\": \"Supplier\"}}";
        for text in [tools, fenced, bare, openai, keyed] {
            let r = recover_tool_calls(text, TOOLS).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(
                names(&r),
                vec![(
                    "describe_class",
                    serde_json::json!({"class_name": "Supplier"})
                )],
                "{text}"
            );
        }
    }

    #[test]
    fn function_tags() {
        for text in [
            "<function=search_instances>{\"search_term\": \"ACME\"}</function>",
            "<function name=\"search_instances\">{\"search_term\": \"ACME\"}</function>",
        ] {
            let r = recover_tool_calls(text, TOOLS).unwrap();
            assert_eq!(
                names(&r),
                vec![(
                    "search_instances",
                    serde_json::json!({"search_term": "ACME"})
                )]
            );
        }
    }

    #[test]
    fn arrays_trailing_commas_and_unknown_tools() {
        let r = recover_tool_calls(
            "[{\"name\": \"get_node_statistics\", \"arguments\": {\"label\": \"Supplier\",}}, {\"name\": \"count_orders\", \"arguments\": {}}]",
            TOOLS,
        )
        .unwrap();
        assert_eq!(r.calls.len(), 2);
        // An unknown tool is still a call: the runner answers that it does not exist.
        assert_eq!(r.calls[1].name, "count_orders");
    }

    #[test]
    fn repair_closes_what_was_cut() {
        assert_eq!(
            repair(r#"{"a": [1, 2"#),
            Some(serde_json::json!({"a": [1, 2]}))
        );
        assert_eq!(repair(r#"{"a": "x\"#), Some(serde_json::json!({"a": "x"})));
        assert_eq!(repair(r#"{"a":"#), Some(serde_json::json!({"a": null})));
        assert_eq!(repair(r#"{"a": 1]"#), None);
    }

    #[test]
    fn garbled_calls_are_recognised() {
        assert!(looks_like_tool_call("<tool_call>\nsearch ACME"));
        assert!(looks_like_tool_call("{\"name\": search_instances"));
        assert!(!looks_like_tool_call("ACME has 5 orders."));
    }
}
