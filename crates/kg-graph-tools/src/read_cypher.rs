//! `run_read_cypher`: Cypher written by an LLM or a user, run only after every layer of the
//! read-only guard (DESIGN.md §4): the lexer-based check and LIMIT (`guard`), the labels and
//! relationship types checked against the live schema, the graph's own `EXPLAIN` verdict
//! (`explain`), and READ access mode for the run itself.

use crate::args;
use crate::catalog::ToolOutput;
use crate::explain::require_read_only;
use crate::graph_error::graph_error;
use crate::guard;
use crate::neighbors::{graph_edge, graph_node};
use crate::schema::{labels, relationship_types, require_label, require_relationship_type};
use kg_wit::types::{Error, ErrorCode, GraphData};
use neo4j_client::{AccessMode, Client, Transport, Value};
use serde_json::{Map, Value as Json, json};

pub const NAME: &str = "run_read_cypher";
const MAX_QUERY_CHARS: usize = 8_000;
const MAX_PARAMETERS: usize = 50;
pub const MAX_ROWS: i64 = 1_000;

pub fn spec() -> (&'static str, &'static str, Json) {
    (
        NAME,
        "Run one read-only Cypher query (MATCH … RETURN …) when no other tool fits. Writes, LOAD CSV, admin commands and procedures other than db.labels/db.relationshipTypes/db.propertyKeys/db.schema.* are refused; labels and relationship types must exist; pass values as $parameters; at most `limit` rows come back.",
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS, "description": "One Cypher statement ending in RETURN, e.g. \"MATCH (s:Supplier)-[:SUPPLIES]->(p:Product) RETURN s.name, count(p) AS products ORDER BY products DESC\"."},
                "parameters": {"type": "object", "maxProperties": MAX_PARAMETERS, "description": "Values for the query's $parameters."},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_ROWS, "default": 100, "description": "Most rows to return; a larger LIMIT in the query is lowered to this."}
            },
            "required": ["query"],
            "additionalProperties": false
        }),
    )
}

pub fn run<T: Transport>(
    client: &Client<T>,
    transport: &T,
    arguments: &str,
) -> Result<ToolOutput, Error> {
    let args = args::object(NAME, arguments, &["query", "parameters", "limit"])?;
    let query = args::optional_string(&args, "query")?
        .ok_or_else(|| args::invalid("`query` is required"))?;
    if query.chars().count() > MAX_QUERY_CHARS {
        return Err(args::invalid(format!(
            "`query` is longer than {MAX_QUERY_CHARS} characters"
        )));
    }
    let parameters = match args.get("parameters") {
        None | Some(Json::Null) => Map::new(),
        Some(Json::Object(p)) if p.len() <= MAX_PARAMETERS => p.clone(),
        Some(_) => {
            return Err(args::invalid(format!(
                "`parameters` must be an object with at most {MAX_PARAMETERS} values"
            )));
        }
    };
    let limit = args::optional_integer(&args, "limit", 100, 1, MAX_ROWS)?;

    let checked = guard::check(&query, limit as usize)
        .map_err(|r| args::invalid(format!("`query` refused by the read-only guard: {}", r.0)))?;
    if !checked.labels.is_empty() {
        let known = labels(client).map_err(graph_error)?;
        for label in &checked.labels {
            require_label(label, &known)?;
        }
    }
    if !checked.relationship_types.is_empty() {
        let known = relationship_types(client).map_err(graph_error)?;
        for rel_type in &checked.relationship_types {
            require_relationship_type(rel_type, &known)?;
        }
    }
    require_read_only(transport, client.config(), &checked.statement, &parameters)?;
    let result = client
        .run(&checked.statement, parameters, AccessMode::Read)
        .map_err(|e| match e.kind {
            neo4j_client::ErrorKind::Syntax | neo4j_client::ErrorKind::Client => Error::new(
                ErrorCode::InvalidArgument,
                format!("`query` was rejected by the graph: {e}"),
            ),
            _ => graph_error(e),
        })?;

    let truncated = result.rows.len() as i64 > limit;
    let rows: Vec<&Vec<Value>> = result.rows.iter().take(limit as usize).collect();
    let mut graph = GraphData {
        nodes: Vec::new(),
        edges: Vec::new(),
    };
    for value in rows.iter().flat_map(|r| r.iter()) {
        collect_graph(value, &mut graph);
    }
    let data_rows: Vec<Json> = rows
        .iter()
        .map(|r| Json::Array(r.iter().map(Value::to_plain_json).collect()))
        .collect();
    let summary = format!(
        "{} row{} ({}){}",
        data_rows.len(),
        if data_rows.len() == 1 { "" } else { "s" },
        result.fields.join(", "),
        if truncated { ", more exist" } else { "" }
    );
    Ok(ToolOutput {
        data: json!({"statement": checked.statement, "fields": result.fields, "rows": data_rows}),
        summary,
        graph: (!graph.nodes.is_empty() || !graph.edges.is_empty()).then_some(graph),
        truncated,
    })
}

/// Nodes, relationships and paths anywhere in a value, once each, for the UI to draw.
fn collect_graph(value: &Value, graph: &mut GraphData) {
    match value {
        Value::Node { element_id, .. } => {
            if !graph.nodes.iter().any(|n| &n.id == element_id)
                && let Some(node) = graph_node(value)
            {
                graph.nodes.push(node);
            }
        }
        Value::Relationship { element_id, .. } => {
            if !graph.edges.iter().any(|e| &e.id == element_id)
                && let Some(edge) = graph_edge(value)
            {
                graph.edges.push(edge);
            }
        }
        Value::Path {
            nodes,
            relationships,
        } => {
            for v in nodes.iter().chain(relationships) {
                collect_graph(v, graph);
            }
        }
        Value::List(items) => items.iter().for_each(|v| collect_graph(v, graph)),
        Value::Map(map) => map.values().for_each(|v| collect_graph(v, graph)),
        _ => {}
    }
}
