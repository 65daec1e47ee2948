//! The tools the agent's LLM may call, free of the host: the graph query tools, document
//! search, the read-only action tools, and `propose_action_plan`, which records the plan
//! instead of executing anything — execution happens only after the plan is shown (and
//! approved when it must be). Arguments are checked and results turned into observations
//! here; the calls themselves go through a [`Backend`] (the components, over WIT).

use crate::approval::ActionPlan;
use crate::react::{Observation, ToolRunner};
use crate::turn::ports::{AgentTools, Toolset};
use kg_actions::tools as action_tools;
use kg_http::actions::{action_spec_json, action_summary_json, validation_json};
use kg_wit::kg::action_executor::action_executor::{ActionSpec, ActionSummary, Validation};
use kg_wit::kg::query_tools::query_tools::{self, ToolResult};
use kg_wit::kg::retriever::retriever::{SearchRequest, SearchResponse};
use kg_wit::types::{Caller, Error, ErrorCode};
use llm_client::{ToolCall, ToolSpec};
use serde_json::{Value, json};
use std::collections::HashMap;

pub const PROPOSE_PLAN: &str = "propose_action_plan";
pub const SEARCH_DOCUMENTS: &str = "search_documents";
/// The graph tool whose answer the agent completes (see [`with_actions`]).
const DESCRIBE_CLASS: &str = "describe_class";
/// What the LLM reads of one observation at most (about 1,000 tokens: a small model's
/// context holds a few, and a CPU reads them in seconds).
const MAX_OBSERVATION_CHARS: usize = 4_000;
/// Targets of one plan whose names are looked up (the read tool's row limit).
const MAX_NAMED_TARGETS: usize = 1_000;

/// The component calls the tools make, one method per call.
pub trait Backend {
    fn list_tools(&mut self) -> Vec<query_tools::ToolSpec>;
    fn call_tool(&mut self, name: &str, arguments: &str) -> Result<ToolResult, Error>;
    fn search(&mut self, request: &SearchRequest) -> Result<SearchResponse, Error>;
    fn list_actions(&mut self, entity_type: Option<&str>) -> Result<Vec<ActionSummary>, Error>;
    fn get_action(&mut self, entity_type: &str, action_name: &str) -> Result<ActionSpec, Error>;
    /// `parameters`: a JSON object, as text.
    fn validate(
        &mut self,
        caller: &Caller,
        entity_type: &str,
        action_name: &str,
        ids: &[String],
        parameters: &str,
    ) -> Result<Vec<Validation>, Error>;
}

/// Runs the LLM's tool calls as `caller`; remembers the plan it proposes. The tools the
/// LLM is offered already leave out what the caller may not use; a call to one anyway is
/// refused here (and the action-executor re-checks what it is asked to do), so no prompt
/// can raise the caller's permissions.
pub struct Toolbox<B> {
    backend: B,
    plan: Option<ActionPlan>,
    caller: Caller,
    may_act: bool,
}

impl<B: Backend> Toolbox<B> {
    pub fn new(backend: B, caller: Caller, may_act: bool) -> Self {
        Toolbox {
            backend,
            plan: None,
            caller,
            may_act,
        }
    }

    fn run_unrecorded(&mut self, call: &ToolCall) -> Observation {
        let args = match call.arguments_json() {
            Ok(Value::Object(map)) => Value::Object(map),
            Ok(_) => return failed("arguments must be a JSON object".into()),
            Err(e) => return failed(e),
        };
        let acting = [PROPOSE_PLAN, action_tools::VALIDATE].contains(&call.name.as_str());
        if acting && !self.may_act {
            return failed(format!(
                "`{}` is not available to you: missing permission `actions:execute`",
                call.name
            ));
        }
        let result = match call.name.as_str() {
            PROPOSE_PLAN => self.propose(&args),
            SEARCH_DOCUMENTS => self.search(&args),
            action_tools::LIST => self.list_actions(&args),
            action_tools::DETAILS => self.action_details(&args),
            action_tools::VALIDATE => self.validate(&args),
            name => self.graph_tool(name, &args),
        };
        result.unwrap_or_else(failed)
    }

    fn graph_tool(&mut self, name: &str, args: &Value) -> Result<Observation, String> {
        let result = self
            .backend
            .call_tool(name, &args.to_string())
            .map_err(|e| match e.detail.as_deref() {
                // An ambiguous reference: the model needs the candidates (label, key,
                // caption, element id) to name one in its next call.
                Some(detail) if detail.contains("\"candidates\"") => {
                    format!("{} {detail}", e.message)
                }
                _ => e.message,
            })?;
        let graph = result.graph.map(|g| {
            json!({
                "nodes": g.nodes.iter().map(|n| json!({"id": n.id, "labels": n.labels, "caption": n.caption})).collect::<Vec<_>>(),
                "edges": g.edges.iter().map(|e| json!({"id": e.id, "type": e.rel_type, "source": e.source, "target": e.target})).collect::<Vec<_>>(),
            })
        });
        // Only `describe_class` is changed here; any other answer the model reads as the
        // component wrote it (compact JSON from serde_json, which parsing and printing
        // again would only reproduce), so it is checked, not parsed into a tree and
        // printed again.
        if name != DESCRIBE_CLASS && is_json(&result.data) {
            return ok_text(result.data, result.summary, graph);
        }
        let data = with_actions(name, parse_json(&result.data), |class| {
            self.backend.list_actions(Some(class))
        });
        ok(data, result.summary, graph)
    }

    fn search(&mut self, args: &Value) -> Result<Observation, String> {
        let top_k = args.get("top_k").and_then(Value::as_u64).unwrap_or(5);
        let request = SearchRequest {
            query: text(args, "query")?,
            top_k: top_k.clamp(1, 20) as u32,
            vector_weight: None,
            bm25_weight: None,
            document_ids: vec![],
            metadata_filter: vec![],
        };
        let response = self.backend.search(&request).map_err(|e| e.message)?;
        let hits: Vec<Value> = response
            .hits
            .iter()
            .map(|h| json!({"document_id": h.document_id, "chunk_id": h.chunk_id, "text": h.text, "score": h.fused_score}))
            .collect();
        let summary = format!("{} passages", hits.len());
        let data = json!({"hits": hits, "warnings": response.warnings});
        ok(data, summary, None)
    }

    fn list_actions(&mut self, args: &Value) -> Result<Observation, String> {
        let entity_type = args.get("entity_type").and_then(Value::as_str);
        let actions = self
            .backend
            .list_actions(entity_type)
            .map_err(|e| e.message)?;
        let list: Vec<Value> = actions.iter().map(action_summary_json).collect();
        let summary = format!("{} actions", list.len());
        ok(json!({"actions": list}), summary, None)
    }

    fn action_details(&mut self, args: &Value) -> Result<Observation, String> {
        let (entity_type, action_name) = (text(args, "entity_type")?, text(args, "action_name")?);
        let spec = self
            .backend
            .get_action(&entity_type, &action_name)
            .map_err(|e| e.message)?;
        let summary = format!("{}.{}", spec.entity_type, spec.name);
        ok(action_spec_json(&spec), summary, None)
    }

    fn validate(&mut self, args: &Value) -> Result<Observation, String> {
        let parameters = args.get("parameters").cloned().unwrap_or(json!({}));
        let (entity_type, action_name, ids) = (
            text(args, "entity_type")?,
            text(args, "action_name")?,
            ids(args)?,
        );
        let results = self
            .backend
            .validate(
                &self.caller,
                &entity_type,
                &action_name,
                &ids,
                &parameters.to_string(),
            )
            .map_err(|e| e.message)?;
        let can = results.iter().filter(|v| v.can_execute).count();
        let list: Vec<Value> = results.iter().map(validation_json).collect();
        let summary = format!("{can} of {} can execute", results.len());
        ok(json!({"results": list}), summary, None)
    }

    fn propose(&mut self, args: &Value) -> Result<Observation, String> {
        let plan = ActionPlan {
            entity_type: text(args, "entity_type")?,
            action_name: text(args, "action_name")?,
            entity_ids: ids(args)?,
            parameters: args.get("parameters").cloned().unwrap_or(json!({})),
        };
        // Refuse a plan for an action that does not exist, so the model can correct it.
        self.backend
            .get_action(&plan.entity_type, &plan.action_name)
            .map_err(|e| e.message)?;
        let summary = format!(
            "plan: {}.{} on {} entities",
            plan.entity_type,
            plan.action_name,
            plan.entity_ids.len()
        );
        self.plan = Some(plan);
        ok(
            json!({"status": "recorded; it will be shown to the user and executed after any approval. Reply with a short confirmation."}),
            summary,
            None,
        )
    }
}

impl<B: Backend> AgentTools for Toolbox<B> {
    fn specs(&mut self, set: Toolset) -> Vec<ToolSpec> {
        specs(self.backend.list_tools(), set)
    }
    fn take_plan(&mut self) -> Option<ActionPlan> {
        self.plan.take()
    }
    /// Display names of a plan's targets, read in one query with the read-only Cypher
    /// tool (`run_read_cypher`, its label checked against the live schema): an entity's
    /// `name`, as the graph tools caption it. Best effort: ids the graph does not name (or
    /// a failed read) are left out, and the plan shows the id instead.
    fn entity_names(&mut self, entity_type: &str, ids: &[String]) -> HashMap<String, String> {
        let mut names = HashMap::new();
        let label_ok = !entity_type.is_empty()
            && entity_type
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !label_ok || ids.is_empty() {
            return names;
        }
        let ids: Vec<&String> = ids.iter().take(MAX_NAMED_TARGETS).collect();
        let arguments = json!({
            "query": format!("MATCH (n:`{entity_type}`) WHERE n.id IN $ids RETURN n.id AS id, coalesce(n.name, n.id) AS name"),
            "parameters": {"ids": ids},
            "limit": ids.len(),
        });
        let data = match self
            .backend
            .call_tool("run_read_cypher", &arguments.to_string())
        {
            Ok(r) => serde_json::from_str::<Value>(&r.data).unwrap_or(Value::Null),
            Err(e) => {
                eprintln!(
                    "agent: could not read the names of the plan's targets: {}",
                    e.message
                );
                return names;
            }
        };
        for row in data["rows"].as_array().into_iter().flatten() {
            if let (Some(id), Some(name)) = (row[0].as_str(), row[1].as_str()) {
                names.insert(id.to_string(), name.to_string());
            }
        }
        names
    }
}

impl<B: Backend> ToolRunner for Toolbox<B> {
    fn run(&mut self, call: &ToolCall) -> Observation {
        let mut span = crate::telemetry::tool_span(call);
        let observation = self.run_unrecorded(call);
        crate::telemetry::tool_outcome(&mut span, &observation);
        observation
    }
}

/// The tools offered for `set`: the graph query tools (`graph`, as the query-tools
/// component lists them), document search, and for an action turn the read-only action
/// tools and `propose_action_plan`.
fn specs(graph: Vec<query_tools::ToolSpec>, set: Toolset) -> Vec<ToolSpec> {
    let mut specs: Vec<ToolSpec> = graph
        .into_iter()
        .map(|t| ToolSpec {
            description: first_sentences(&t.description, TOOL_DESCRIPTION_CHARS),
            parameters: compact_schema(&ToolSpec::schema_or_object(t.parameters_schema)),
            name: t.name,
        })
        .collect();
    specs.push(ToolSpec {
        name: SEARCH_DOCUMENTS.into(),
        description: "Hybrid (vector + keyword) search over ingested documents such as policies; returns the best passages with their document ids.".into(),
        // Compact, keys sorted: the text serde_json printed for it as a tree.
        parameters: r#"{"properties":{"query":{"type":"string"},"top_k":{"maximum":20,"minimum":1,"type":"integer"}},"required":["query"],"type":"object"}"#.into(),
    });
    if set == Toolset::Action {
        let read_only = [
            action_tools::LIST,
            action_tools::DETAILS,
            action_tools::VALIDATE,
        ];
        for (name, description, schema) in action_tools::specs() {
            if read_only.contains(&name) {
                specs.push(ToolSpec {
                    name: name.into(),
                    description: description.into(),
                    parameters: schema.to_string(),
                });
            }
        }
        specs.push(ToolSpec {
            name: PROPOSE_PLAN.into(),
            description: "Propose the action to run: the entity type, the action, the ids of every target entity (found with the query tools) and the parameters. Nothing runs yet: the plan is shown to the user, approved when it must be, then executed with a progress report.".into(),
            parameters: json!({"type": "object", "properties": {
                "entity_type": {"type": "string"}, "action_name": {"type": "string"},
                "entity_ids": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                "parameters": {"type": "object"}},
                "required": ["entity_type", "action_name", "entity_ids"]}).to_string(),
        });
    }
    specs
}

/// What the LLM reads of a tool's description, and of an argument's. Every tool's schema
/// goes with every step: the graph tools' full texts were about 2,000 prompt tokens, 20 s
/// of a CPU model's time per step before it wrote a word.
const TOOL_DESCRIPTION_CHARS: usize = 240;
const ARGUMENT_DESCRIPTION_CHARS: usize = 90;
/// Schema keywords the tool checks itself, which the model need not read.
const CHECKED_ONLY: &[&str] = &["maxLength", "minLength", "pattern", "maxItems", "$schema"];

/// The sentences of `text` that fit in `max` characters (at least the first, cut at a
/// word when it alone is longer).
pub fn first_sentences(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut end = 0;
    for (i, _) in text.match_indices(". ") {
        if text[..=i].chars().count() > max {
            break;
        }
        end = i + 1;
    }
    if end > 0 {
        return text[..end].to_string();
    }
    let cut: String = text.chars().take(max).collect();
    match cut.rfind(' ') {
        Some(i) => format!("{}…", &cut[..i]),
        None => cut,
    }
}

/// A tool's JSON Schema as the model reads it: without what only the tool checks, a
/// nullable type as its type (an optional argument may be left out), and argument
/// descriptions cut to their first sentence. The tool still checks the full schema.
pub fn compact_schema(schema: &str) -> String {
    fn walk(value: &mut Value, in_properties: bool) {
        match value {
            Value::Object(map) => {
                if !in_properties {
                    map.retain(|k, _| !CHECKED_ONLY.contains(&k.as_str()));
                    if let Some(Value::Array(types)) = map.get_mut("type") {
                        types.retain(|t| t != "null");
                        if types.len() == 1 {
                            let only = types.remove(0);
                            map.insert("type".into(), only);
                        }
                    }
                    if let Some(Value::String(d)) = map.get_mut("description") {
                        *d = first_sentences(d, ARGUMENT_DESCRIPTION_CHARS);
                    }
                }
                for (key, child) in map.iter_mut() {
                    walk(child, !in_properties && key == "properties");
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| walk(v, false)),
            _ => {}
        }
    }
    match serde_json::from_str::<Value>(schema) {
        Ok(mut value) => {
            walk(&mut value, false);
            value.to_string()
        }
        Err(_) => schema.to_string(),
    }
}

/// Whether `text` is one JSON value (checked without building it).
fn is_json(text: &str) -> bool {
    serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
}

/// Components hand JSON over WIT as text; a component that sends invalid JSON is a bug,
/// reported as a string rather than dropped.
pub fn parse_json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string()))
}

/// `describe_class` answers `available_actions: null`: the catalog belongs to the
/// action-executor, and components cannot call each other, so the caller fills it in with
/// `list_actions` (the actions declared on a type).
pub fn with_actions(
    tool: &str,
    mut data: Value,
    list_actions: impl FnOnce(&str) -> Result<Vec<ActionSummary>, Error>,
) -> Value {
    if tool != DESCRIBE_CLASS {
        return data;
    }
    let Some(class) = data
        .get("class")
        .and_then(Value::as_str)
        .map(str::to_string)
    else {
        return data;
    };
    data["available_actions"] = match list_actions(&class) {
        Ok(actions) => actions.iter().map(action_summary_json).collect(),
        // No action is declared on this type.
        Err(e) if e.code == ErrorCode::NotFound => json!([]),
        Err(e) => {
            data["available_actions_error"] = json!(e.message);
            Value::Null
        }
    };
    data
}

fn failed(message: String) -> Observation {
    Observation {
        ok: false,
        content: json!({"error": message}).to_string(),
        summary: format!("failed: {message}"),
        graph: None,
    }
}

/// A result as the LLM reads it: cut (at a character boundary) past
/// [`MAX_OBSERVATION_CHARS`].
fn ok(data: Value, summary: String, graph: Option<Value>) -> Result<Observation, String> {
    ok_text(data.to_string(), summary, graph)
}

/// [`ok`] for a result already in JSON text.
fn ok_text(
    mut content: String,
    summary: String,
    graph: Option<Value>,
) -> Result<Observation, String> {
    if content.len() > MAX_OBSERVATION_CHARS {
        let mut cut = MAX_OBSERVATION_CHARS;
        while !content.is_char_boundary(cut) {
            cut -= 1;
        }
        content.truncate(cut);
        content.push_str("…(truncated)");
    }
    Ok(Observation {
        ok: true,
        content,
        summary,
        graph,
    })
}

fn text(args: &Value, name: &str) -> Result<String, String> {
    args.get(name)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| format!("`{name}` is required (a string)"))
}

fn ids(args: &Value) -> Result<Vec<String>, String> {
    args.get("entity_ids")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect::<Vec<_>>()
        })
        .filter(|v| !v.is_empty())
        .ok_or_else(|| "`entity_ids` is required (an array of strings)".to_string())
}

#[cfg(test)]
mod tests;
