//! `find_path_between_instances`: shortest path(s) between two instances.

use crate::args;
use crate::catalog::ToolOutput;
use crate::graph_error::graph_error;
use crate::instance::{Resolved, resolve_pair};
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
        "Find how two instances are connected: the shortest paths between them, up to max_depth relationships long. Each instance is its key value (e.g. \"PO-0003\"; add start_class or end_class when the value is not unique across classes), its key as the JSON object an answer gave (needed for a key of several properties), its caption (name), or an element_id from an earlier answer.",
        json!({
            "type": "object",
            "properties": {
                "start": {"type": "string", "description": "Key value, key object as JSON text, caption (name) or element_id of the first instance."},
                "start_class": {"type": "string", "description": "The first instance's class (label), when its key or name is not unique across classes."},
                "end": {"type": "string", "description": "Key value, key object as JSON text, caption (name) or element_id of the second instance."},
                "end_class": {"type": "string", "description": "The second instance's class (label), when its key or name is not unique across classes."},
                "max_depth": {"type": "integer", "minimum": 1, "maximum": 6, "default": 4},
                "limit": {"type": "integer", "minimum": 1, "maximum": 10, "default": 3, "description": "Most paths to return."}
            },
            "required": ["start", "end"],
            "additionalProperties": false
        }),
    )
}

pub fn run<T: Transport>(client: &Graph<'_, T>, arguments: &str) -> Result<ToolOutput, Error> {
    let args = args::object(
        NAME,
        arguments,
        &[
            "start",
            "start_class",
            "end",
            "end_class",
            "max_depth",
            "limit",
        ],
    )?;
    let start = args::optional_string(&args, "start")?
        .ok_or_else(|| args::invalid("`start` is required"))?;
    let end =
        args::optional_string(&args, "end")?.ok_or_else(|| args::invalid("`end` is required"))?;
    let max_depth = args::optional_integer(&args, "max_depth", 4, 1, 6)?;
    let limit = args::optional_integer(&args, "limit", 3, 1, 10)?;
    let start_class = args::optional_string(&args, "start_class")?;
    let end_class = args::optional_string(&args, "end_class")?;
    let (from, to) = resolve_pair(
        client,
        (&start, start_class.as_deref()),
        (&end, end_class.as_deref()),
    )?;
    if from.element_id == to.element_id {
        return Err(args::invalid("`start` and `end` are the same instance"));
    }
    // Both ends are seeks by element id; the search between them is bounded by max_depth.
    // A path never passes a node or relationship the audience may not see: the search
    // itself avoids them (Neo4j applies such predicates while it searches), so a path
    // around them is found rather than none.
    let view = client.view();
    let mut unseen = Vec::new();
    if let Some(e) = view.label_exclusion("x") {
        unseen.push(format!("all(x IN nodes(p) WHERE {e})"));
    }
    if !view.hidden_types.is_empty() {
        unseen.push("none(r IN relationships(p) WHERE type(r) IN $hidden_types)".to_string());
    }
    let unseen = if unseen.is_empty() {
        String::new()
    } else {
        format!(" WHERE {}", unseen.join(" AND "))
    };
    let statement = format!(
        "MATCH (a) WHERE {} MATCH (b) WHERE {} \
         MATCH p = shortestPath((a)-[*..{max_depth}]-(b)){unseen} RETURN p LIMIT $limit",
        Resolved::condition("a", "from"),
        Resolved::condition("b", "to"),
    );
    let mut params = Map::new();
    if !view.hidden_types.is_empty() {
        params.insert("hidden_types".into(), json!(view.hidden_types));
    }
    if !view.hidden_labels.is_empty() {
        params.insert(
            kg_graph_profile::policy::HIDDEN_LABELS_PARAMETER.into(),
            view.hidden_labels_parameter(),
        );
    }
    params.insert("from".into(), json!(from.element_id));
    params.insert("to".into(), json!(to.element_id));
    params.insert("limit".into(), json!(limit));
    let result = client
        .run(&statement, params, AccessMode::Read)
        .map_err(graph_error)?;

    let profile = client.profile().map_err(graph_error)?;
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
            if let Some(n) = graph_node(&profile, node) {
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
        data: json!({"start": from.describe(), "end": to.describe(), "paths": paths}),
        summary,
        graph: (!nodes.is_empty()).then(|| GraphData {
            nodes: nodes.into_values().collect(),
            edges: edges.into_values().collect(),
        }),
        truncated: false,
    })
}
