//! The tool catalog: specs for LLM tool calling and dispatch by name. Every answer passes
//! the byte cap here, whatever the tool: data and graph together.

use crate::byte_cap::{ENVELOPE_RESERVE, MAX_RESULT_BYTES, cap_answer};
use crate::session::{Graph, Noted, Session};
use crate::{by_class, describe, neighbors, ontology, path, read_cypher, search, statistics};
use kg_wit::types::{Error, ErrorCode, GraphData};
use neo4j_client::{Client, Transport};
use serde_json::{Value as Json, json};

/// A tool's answer: compact JSON for the LLM and a one-line summary for people.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    pub data: Json,
    pub summary: String,
    /// Present when the result is a subgraph, for the UI to draw.
    pub graph: Option<GraphData>,
    pub truncated: bool,
}

/// (name, description, JSON Schema of the arguments) of every tool.
pub fn specs() -> Vec<(&'static str, &'static str, Json)> {
    let mut specs = vec![search::spec()];
    specs.push(by_class::spec());
    specs.push(neighbors::spec());
    specs.push(path::spec());
    specs.extend(ontology::specs());
    specs.push(describe::spec());
    specs.push(statistics::spec());
    specs.push(read_cypher::spec());
    specs
        .into_iter()
        .map(|(name, description, schema)| (name, description, as_checked(schema)))
        .collect()
}

/// The schema made as precise as the argument checks (`args.rs`), so a client, an LLM
/// or a tester (schemathesis, over docs/openapi.json) reads what is really accepted: a
/// string holds a non-blank character and at most `MAX_STRING_CHARS`; an optional
/// argument may be `null` (taken as absent, as LLMs often send it).
fn as_checked(mut schema: Json) -> Json {
    let required: Vec<String> = schema["required"]
        .as_array()
        .map(|r| {
            r.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    if let Some(properties) = schema["properties"].as_object_mut() {
        for (name, property) in properties.iter_mut() {
            let Some(map) = property.as_object_mut() else {
                continue;
            };
            let kind = map.get("type").cloned();
            if kind == Some(json!("string")) && !map.contains_key("enum") {
                map.entry("minLength").or_insert(json!(1));
                map.entry("maxLength")
                    .or_insert(json!(crate::args::MAX_STRING_CHARS));
                map.entry("pattern").or_insert(json!("\\S"));
            }
            if let Some(Json::String(kind)) = kind
                && !required.contains(name)
            {
                map.insert("type".into(), json!([kind, "null"]));
                if let Some(Json::Array(values)) = map.get_mut("enum") {
                    values.push(Json::Null);
                }
            }
        }
    }
    schema
}

/// Runs tool `name` on its own (a session of one call). `transport` is the client's own
/// transport, for the one request the client does not model (run_read_cypher's `EXPLAIN`
/// plan).
pub fn call<T: Transport>(
    client: &Client<T>,
    transport: &T,
    name: &str,
    arguments: &str,
) -> Result<ToolOutput, Error> {
    call_in(&Session::new(), client, transport, name, arguments)
}

/// Runs tool `name` within `session`, the request's: schema lists are shared with the
/// request's other calls, and the statements' notifications are recorded there (take them
/// with [`Session::take_notifications`]). A `run_read_cypher` answer carries the
/// performance hints the graph gave about the agent's query (`hints`).
pub fn call_in<T: Transport>(
    session: &Session,
    client: &Client<T>,
    transport: &T,
    name: &str,
    arguments: &str,
) -> Result<ToolOutput, Error> {
    let first_note = session.notes_len();
    let client = &Graph::new(client, session);
    let mut output = match name {
        statistics::NAME => statistics::run(client, arguments),
        search::NAME => search::run(client, arguments),
        by_class::NAME => by_class::run(client, arguments),
        neighbors::NAME => neighbors::run(client, arguments),
        path::NAME => path::run(client, arguments),
        ontology::CLASSES => ontology::classes(client, arguments),
        ontology::RELATIONSHIPS => ontology::relationships(client, arguments),
        describe::NAME => describe::run(client, arguments),
        read_cypher::NAME => read_cypher::run(client, transport, arguments),
        unknown => {
            let names: Vec<String> = crate::SPEC_TEXTS.iter().map(|s| s.0.to_string()).collect();
            let suggestions = crate::close_matches(unknown, &names);
            let mut e = Error::new(ErrorCode::NotFound, format!("no tool `{unknown}`"));
            e.detail = Some(json!({"did_you_mean": suggestions, "tools": names}).to_string());
            Err(e)
        }
    }?;
    if name == read_cypher::NAME {
        let hints = hints(&session.notes_since(first_note));
        if let (false, Some(data)) = (hints.is_empty(), output.data.as_object_mut()) {
            data.insert("hints".into(), Json::Array(hints));
        }
    }
    // The whole answer, data and graph together, as the HTTP API sends it, fits in the
    // cap with room for what the dispatcher adds.
    if cap_answer(
        name,
        &mut output.data,
        &output.summary,
        &mut output.graph,
        MAX_RESULT_BYTES - ENVELOPE_RESERVE,
    ) {
        output.truncated = true;
        output
            .summary
            .push_str(" (cut to fit the result size limit)");
    }
    Ok(output)
}

/// Most hints one answer carries.
const MAX_HINTS: usize = 5;
/// Longest hint text, in characters.
const MAX_HINT_CHARS: usize = 240;

/// The graph's performance notifications (cartesian product, unbounded variable-length
/// pattern, missing index, eager operator, …) as a compact list for the agent: the code's
/// last segment, the title (what to change) and where in the query, each condition once.
pub fn hints(notes: &[Noted]) -> Vec<Json> {
    let mut seen = Vec::new();
    let mut hints = Vec::new();
    for n in notes.iter().map(|n| &n.notification) {
        if !n.is_performance() || hints.len() == MAX_HINTS {
            continue;
        }
        let key = (n.short_code().to_string(), n.position);
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let text = if n.title.is_empty() {
            &n.description
        } else {
            &n.title
        };
        let mut hint = json!({"code": n.short_code(), "hint": one_line(text, MAX_HINT_CHARS)});
        if let Some(p) = n.position.filter(|p| p.line > 0) {
            hint["at"] = json!({"line": p.line, "column": p.column});
        }
        hints.push(hint);
    }
    hints
}

/// The log line for a notification worth an operator's attention, or None: deprecations
/// and warnings always, performance hints about the application's own statements (the
/// agent gets those about its own query as `hints`). One line; the statement text only for
/// the application's own (parameterised) statements, never parameter values, nor the
/// text `run_read_cypher` was given.
pub fn log_line(tool: &str, noted: &Noted) -> Option<String> {
    let n = &noted.notification;
    let own_statement = tool != read_cypher::NAME;
    if !(n.is_deprecation() || n.is_warning() || (own_statement && n.is_performance())) {
        return None;
    }
    let position = n
        .position
        .map(|p| format!(" at={}:{}", p.line, p.column))
        .unwrap_or_default();
    let statement = if own_statement {
        format!(
            " statement=\"{}\"",
            one_line(&noted.statement, 300).replace('"', "'")
        )
    } else {
        " statement=<run_read_cypher input>".to_string()
    };
    Some(format!(
        "neo4j notification: tool={tool} severity={} category={} code={}{position} title=\"{}\"{statement}",
        or_dash(&n.severity),
        or_dash(&n.category),
        or_dash(&n.code),
        one_line(&n.title, MAX_HINT_CHARS).replace('"', "'"),
    ))
}

fn or_dash(s: &str) -> &str {
    if s.is_empty() { "-" } else { s }
}

/// `text` on one line (runs of whitespace collapsed), cut to `max` characters.
fn one_line(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &flat[..cut]),
        None => flat,
    }
}
