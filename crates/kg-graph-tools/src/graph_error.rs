use kg_wit::types::{Error, ErrorCode};
use neo4j_client::Neo4jError;
use serde_json::json;

/// A Neo4j failure of a tool's own query as the tools' typed error (mapping in
/// `Error::from_graph`), except a statement the graph stopped for its cost (time or
/// memory, [`Neo4jError::is_too_expensive`]): the request caused that, so it is a 400
/// `query_too_expensive`, not a failed dependency.
pub fn graph_error(e: Neo4jError) -> Error {
    if e.is_too_expensive() {
        return too_expensive_by_graph(&e);
    }
    Error::from_graph("graph query failed", &e)
}

/// A statement the graph stopped because it needed more time or memory than allowed.
pub fn too_expensive_by_graph(e: &Neo4jError) -> Error {
    let code = e.code.as_deref().unwrap_or_default();
    let (limit, what) = if code.contains("Timed") {
        ("time", "took longer than the graph allows a statement")
    } else {
        (
            "memory",
            "needed more memory than the graph allows a statement",
        )
    };
    too_expensive(
        format!(
            "the query is too expensive: it {what} ({e}); narrow it (a label, a WHERE, fewer hops, a smaller LIMIT) or aggregate"
        ),
        json!({"limit": limit, "graph_code": code}),
    )
}

/// `invalid-argument` with the detail code `query_too_expensive` (HTTP 400) and `extra`
/// merged into the detail.
pub fn too_expensive(message: String, extra: serde_json::Value) -> Error {
    let mut detail = json!({"code": "query_too_expensive"});
    if let (Some(d), serde_json::Value::Object(extra)) = (detail.as_object_mut(), extra) {
        d.extend(extra);
    }
    let mut error = Error::new(ErrorCode::InvalidArgument, message);
    error.detail = Some(detail.to_string());
    error
}
