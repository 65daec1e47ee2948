//! `GET /tools` and `POST /tools/{name}` over the query-tools component.

use kg_http::ApiError;
use kg_wit::kg::{action_executor::action_executor, query_tools::query_tools};
use kg_wit::types::ErrorCode;
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

/// Components hand JSON over WIT as text; a component that sends invalid JSON is a bug,
/// reported as a string rather than dropped.
fn parse_json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string()))
}

/// `describe_class` answers `available_actions: null`: the catalog belongs to the
/// action-executor, and components cannot call each other, so the dispatcher fills it in.
pub fn with_actions(tool: &str, mut data: Value) -> Value {
    if tool != "describe_class" {
        return data;
    }
    let Some(class) = data
        .get("class")
        .and_then(Value::as_str)
        .map(str::to_string)
    else {
        return data;
    };
    data["available_actions"] = match action_executor::list_actions(Some(&class)) {
        Ok(actions) => actions
            .iter()
            .map(kg_http::actions::action_summary_json)
            .collect(),
        // No action is declared on this type.
        Err(e) if e.code == ErrorCode::NotFound => json!([]),
        Err(e) => {
            data["available_actions_error"] = json!(e.message);
            Value::Null
        }
    };
    data
}
