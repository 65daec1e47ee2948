//! `GET /tools` and `POST /tools/{name}` over the query-tools component.

use kg_http::ApiError;
use kg_wit::kg::agent::query_tools;
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
    let result = query_tools::call_tool(name, &Value::Object(arguments).to_string())?;
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
            "data": parse_json(&result.data),
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
