//! `find_path_between_instances`: shortest path(s) between two instances.

use crate::args;
use crate::catalog::ToolOutput;
use crate::graph_error::graph_error;
use crate::instance::resolve;
use crate::neighbors::{graph_edge, graph_node};
use crate::session::Graph;
use kg_wit::types::{Error, GraphData};
use neo4j_client::{AccessMode, Transport, Value};
use serde_json::{Map, Value as Json, json};
use std::collections::BTreeMap;

pub const NAME: &str = "find_path_between_instances";

pub fn spec() -> (&'static str, &'static str, Json) {
    (
        NAME,
        "Find how two instances (by id or name) are connected: the shortest paths between them, up to max_depth relationships long.",
        json!({
            "type": "object",
            "properties": {
                "start": {"type": "string", "description": "Id or exact name of the first instance."},
                "end": {"type": "string", "description": "Id or exact name of the second instance."},
                "max_depth": {"type": "integer", "minimum": 1, "maximum": 6, "default": 4},
                "limit": {"type": "integer", "minimum": 1, "maximum": 10, "default": 3, "description": "Most paths to return."}
            },
            "required": ["start", "end"],
            "additionalProperties": false
        }),
    )
}

pub fn run<T: Transport>(client: &Graph<'_, T>, arguments: &str) -> Result<ToolOutput, Error> {
    let args = args::object(NAME, arguments, &["start", "end", "max_depth", "limit"])?;
    let start = args::optional_string(&args, "start")?
        .ok_or_else(|| args::invalid("`start` is required"))?;
    let end =
        args::optional_string(&args, "end")?.ok_or_else(|| args::invalid("`end` is required"))?;
    let max_depth = args::optional_integer(&args, "max_depth", 4, 1, 6)?;
    let limit = args::optional_integer(&args, "limit", 3, 1, 10)?;
    let from = resolve(client, &start, None)?;
    let to = resolve(client, &end, None)?;
    if from.property == to.property && from.value == to.value {
        return Err(args::invalid("`start` and `end` are the same instance"));
    }
    let statement = format!(
        "MATCH (a) WHERE a.{} = $from MATCH (b) WHERE b.{} = $to \
         MATCH p = shortestPath((a)-[*..{max_depth}]-(b)) RETURN p LIMIT $limit",
        crate::cypher::quote_name(from.property),
        crate::cypher::quote_name(to.property),
    );
    let mut params = Map::new();
    params.insert("from".into(), json!(from.value));
    params.insert("to".into(), json!(to.value));
    params.insert("limit".into(), json!(limit));
    let result = client
        .run(&statement, params, AccessMode::Read)
        .map_err(graph_error)?;

    let mut nodes = BTreeMap::new();
    let mut edges = BTreeMap::new();
    let mut paths = Vec::new();
    for row in &result.rows {
        let Some(Value::Path {
            nodes: path_nodes,
            relationships,
        }) = row.first()
        else {
            continue;
        };
        let mut steps = Vec::new();
        for (i, node) in path_nodes.iter().enumerate() {
            if let Some(n) = graph_node(node) {
                steps.push(json!({"node": n.caption, "labels": n.labels}));
                nodes.entry(n.id.clone()).or_insert(n);
            }
            if let Some(edge) = relationships.get(i).and_then(graph_edge) {
                steps.push(json!({"relationship": edge.rel_type}));
                edges.entry(edge.id.clone()).or_insert(edge);
            }
        }
        paths.push(json!({"length": relationships.len(), "steps": steps}));
    }
    let summary = match paths.first() {
        None => format!(
            "no path between {} and {} within {max_depth} relationships",
            from.caption, to.caption
        ),
        Some(p) => format!(
            "{} shortest path{} of length {} between {} and {}",
            paths.len(),
            if paths.len() == 1 { "" } else { "s" },
            p["length"],
            from.caption,
            to.caption
        ),
    };
    Ok(ToolOutput {
        data: json!({"paths": paths}),
        summary,
        graph: (!nodes.is_empty()).then(|| GraphData {
            nodes: nodes.into_values().collect(),
            edges: edges.into_values().collect(),
        }),
        truncated: false,
    })
}
