//! `GET /tools` and `POST /tools/{name}` over the query-tools component.

use kg_agent_core::toolbox::parse_json;
use kg_http::ApiError;
use kg_wit::kg::{action_executor::action_executor, query_tools::query_tools};
use serde_json::{Value, json};
use spin_sdk::http::Response;

pub fn list() -> Response {
    let tools: Vec<Value> = query_tools::list_tools()
        .into_iter()
        .map(|t| {
            json!({
                "name": t.name,
                "description": t.description,
                "parameters": parse_json(&t.parameters_schema),
            })
        })
        .collect();
    crate::json_response(200, &json!({ "tools": tools }))
}

pub fn call(name: &str, body: &[u8]) -> Result<Response, ApiError> {
    let arguments = kg_http::body::json_object(body)?;
    let result = crate::causal::query_tools(|| {
        query_tools::call_tool(name, &Value::Object(arguments).to_string())
    })?;
    let graph = result.graph.map(|g| {
        json!({
            "nodes": g.nodes.iter().map(|n| json!({"id": n.id, "labels": n.labels, "caption": n.caption, "properties": parse_json(&n.properties)})).collect::<Vec<_>>(),
            "edges": g.edges.iter().map(|e| json!({"id": e.id, "type": e.rel_type, "source": e.source, "target": e.target, "properties": parse_json(&e.properties)})).collect::<Vec<_>>(),
        })
    });
    Ok(crate::json_response(
        200,
        &json!({
            "tool": name,
            "data": with_actions(name, parse_json(&result.data)),
            "summary": result.summary,
            "graph_data": graph,
            "truncated": result.truncated,
        }),
    ))
}

/// `describe_class`'s actions, filled in from the action-executor's catalog
/// (`kg_agent_core::toolbox::with_actions`).
fn with_actions(tool: &str, data: Value) -> Value {
    kg_agent_core::toolbox::with_actions(tool, data, |class| {
        action_executor::list_actions(Some(class))
    })
}
