//! The tools the agent's LLM may call, answered over the components' WIT interfaces: the
//! graph query tools, document search, the read-only action tools, and
//! `propose_action_plan`, which records the plan instead of executing anything — execution
//! happens only after the plan is shown (and approved when it must be).

use kg_actions::tools as action_tools;
use kg_agent_core::approval::ActionPlan;
use kg_agent_core::react::{Observation, ToolRunner};
use kg_agent_core::turn::ports::{AgentTools, Toolset};
use kg_wit::kg::{
    action_executor::action_executor, query_tools::query_tools, retriever::retriever,
};
use kg_wit::types::Error;
use llm_client::{ToolCall, ToolSpec};
use serde_json::{Value, json};
use std::collections::HashMap;

pub const PROPOSE_PLAN: &str = "propose_action_plan";
pub const SEARCH_DOCUMENTS: &str = "search_documents";
/// What the LLM reads of one observation at most.
const MAX_OBSERVATION_CHARS: usize = 16_000;
/// Targets of one plan whose names are looked up (the read tool's row limit).
const MAX_NAMED_TARGETS: usize = 1_000;

fn specs(set: Toolset) -> Vec<ToolSpec> {
    let mut specs: Vec<ToolSpec> = query_tools::list_tools()
        .into_iter()
        .map(|t| ToolSpec {
            name: t.name,
            description: t.description,
            parameters: serde_json::from_str(&t.parameters_schema)
                .unwrap_or(json!({"type": "object"})),
        })
        .collect();
    specs.push(ToolSpec {
        name: SEARCH_DOCUMENTS.into(),
        description: "Hybrid (vector + keyword) search over ingested documents such as policies; returns the best passages with their document ids.".into(),
        parameters: json!({"type": "object", "properties": {"query": {"type": "string"}, "top_k": {"type": "integer", "minimum": 1, "maximum": 20}}, "required": ["query"]}),
    });
    if set == Toolset::Action {
        for (name, description, schema) in action_tools::specs() {
            if [
                action_tools::LIST,
                action_tools::DETAILS,
                action_tools::VALIDATE,
            ]
            .contains(&name)
            {
                specs.push(ToolSpec {
                    name: name.into(),
                    description: description.into(),
                    parameters: schema,
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
                "required": ["entity_type", "action_name", "entity_ids"]}),
        });
    }
    specs
}

/// Runs the LLM's tool calls as `caller`; remembers the plan it proposes. The tools the
/// LLM is offered already leave out what the caller may not use; a call to one anyway is
/// refused here (and the action-executor re-checks what it is asked to do), so no prompt
/// can raise the caller's permissions.
pub struct WitTools {
    plan: Option<ActionPlan>,
    caller: kg_wit::types::Caller,
    may_act: bool,
}

impl WitTools {
    pub fn new(caller: kg_wit::types::Caller, may_act: bool) -> WitTools {
        WitTools {
            plan: None,
            caller,
            may_act,
        }
    }
}

impl AgentTools for WitTools {
    fn specs(&mut self, set: Toolset) -> Vec<ToolSpec> {
        specs(set)
    }
    fn take_plan(&mut self) -> Option<ActionPlan> {
        self.plan.take()
    }
    fn entity_names(&mut self, entity_type: &str, ids: &[String]) -> HashMap<String, String> {
        entity_names(entity_type, ids)
    }
}

impl ToolRunner for WitTools {
    fn run(&mut self, call: &ToolCall) -> Observation {
        let mut span = crate::telemetry::tool_span(call);
        let observation = self.run_unrecorded(call);
        crate::telemetry::tool_outcome(&mut span, &observation);
        observation
    }
}

impl WitTools {
    fn run_unrecorded(&mut self, call: &ToolCall) -> Observation {
        let arguments = match call.arguments_json() {
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
            PROPOSE_PLAN => self.propose(&arguments),
            SEARCH_DOCUMENTS => search(&arguments),
            action_tools::LIST => list_actions(&arguments),
            action_tools::DETAILS => action_details(&arguments),
            action_tools::VALIDATE => validate(&self.caller, &arguments),
            name => graph_tool(name, &arguments),
        };
        result.unwrap_or_else(failed)
    }
}

fn failed(message: String) -> Observation {
    Observation {
        ok: false,
        content: json!({"error": message}).to_string(),
        summary: format!("failed: {message}"),
        graph: None,
    }
}

fn wit_error(e: Error) -> String {
    e.message
}

fn ok(data: Value, summary: String, graph: Option<Value>) -> Result<Observation, String> {
    let mut content = data.to_string();
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

fn graph_tool(name: &str, args: &Value) -> Result<Observation, String> {
    let result = crate::causal::query_tools(|| query_tools::call_tool(name, &args.to_string()))
        .map_err(wit_error)?;
    let data: Value = serde_json::from_str(&result.data).unwrap_or(Value::String(result.data));
    let data = crate::tools::with_actions(name, data);
    let graph = result.graph.map(|g| {
        json!({
            "nodes": g.nodes.iter().map(|n| json!({"id": n.id, "labels": n.labels, "caption": n.caption})).collect::<Vec<_>>(),
            "edges": g.edges.iter().map(|e| json!({"id": e.id, "type": e.rel_type, "source": e.source, "target": e.target})).collect::<Vec<_>>(),
        })
    });
    ok(data, result.summary, graph)
}

fn search(args: &Value) -> Result<Observation, String> {
    let top_k = args
        .get("top_k")
        .and_then(Value::as_u64)
        .unwrap_or(5)
        .clamp(1, 20) as u32;
    let request = retriever::SearchRequest {
        query: text(args, "query")?,
        top_k,
        vector_weight: None,
        bm25_weight: None,
        document_ids: vec![],
        metadata_filter: vec![],
    };
    let response = crate::causal::retriever(|| retriever::search(&request)).map_err(wit_error)?;
    let hits: Vec<Value> = response
        .hits
        .iter()
        .map(|h| json!({"document_id": h.document_id, "chunk_id": h.chunk_id, "text": h.text, "score": h.fused_score}))
        .collect();
    let summary = format!("{} passages", hits.len());
    ok(
        json!({"hits": hits, "warnings": response.warnings}),
        summary,
        None,
    )
}

fn list_actions(args: &Value) -> Result<Observation, String> {
    let entity_type = args.get("entity_type").and_then(Value::as_str);
    let actions = action_executor::list_actions(entity_type).map_err(wit_error)?;
    let list: Vec<Value> = actions
        .iter()
        .map(kg_http::actions::action_summary_json)
        .collect();
    let summary = format!("{} actions", list.len());
    ok(json!({"actions": list}), summary, None)
}

fn action_details(args: &Value) -> Result<Observation, String> {
    let spec =
        action_executor::get_action(&text(args, "entity_type")?, &text(args, "action_name")?)
            .map_err(wit_error)?;
    ok(
        kg_http::actions::action_spec_json(&spec),
        format!("{}.{}", spec.entity_type, spec.name),
        None,
    )
}

fn validate(caller: &kg_wit::types::Caller, args: &Value) -> Result<Observation, String> {
    let parameters = args.get("parameters").cloned().unwrap_or(json!({}));
    let (entity_type, action_name, ids) = (
        text(args, "entity_type")?,
        text(args, "action_name")?,
        ids(args)?,
    );
    let results = crate::causal::executor(|| {
        action_executor::validate(
            caller,
            &entity_type,
            &action_name,
            &ids,
            &parameters.to_string(),
        )
    })
    .map_err(wit_error)?;
    let can = results.iter().filter(|v| v.can_execute).count();
    let list: Vec<Value> = results
        .iter()
        .map(kg_http::actions::validation_json)
        .collect();
    ok(
        json!({"results": list}),
        format!("{can} of {} can execute", results.len()),
        None,
    )
}

impl WitTools {
    fn propose(&mut self, args: &Value) -> Result<Observation, String> {
        let plan = ActionPlan {
            entity_type: text(args, "entity_type")?,
            action_name: text(args, "action_name")?,
            entity_ids: ids(args)?,
            parameters: args.get("parameters").cloned().unwrap_or(json!({})),
        };
        // Refuse a plan for an action that does not exist, so the model can correct it.
        action_executor::get_action(&plan.entity_type, &plan.action_name).map_err(wit_error)?;
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

/// Display names of a plan's targets, read in one query over the query-tools interface
/// (`run_read_cypher`, read-only, its label checked against the live schema): an
/// entity's `name`, as the graph tools caption it. Best effort: ids the graph does not
/// name (or a failed read) are left out, and the plan shows the id instead.
fn entity_names(entity_type: &str, ids: &[String]) -> HashMap<String, String> {
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
    let result = crate::causal::query_tools(|| {
        query_tools::call_tool("run_read_cypher", &arguments.to_string())
    });
    let data = match result {
        Ok(r) => serde_json::from_str::<Value>(&r.data).unwrap_or(Value::Null),
        Err(e) => {
            eprintln!(
                "dispatcher: could not read the names of the plan's targets: {}",
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
