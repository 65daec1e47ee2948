//! `get_node_statistics`: node counts per label (or for one label) with sample nodes.

use crate::args;
use crate::catalog::ToolOutput;
use crate::cypher::quote_name;
use crate::graph_error::graph_error;
use crate::schema::{require_label_unless_found, require_odd_label_first};
use crate::session::Graph;
use kg_wit::types::Error;
use neo4j_client::{AccessMode, Transport, Value};
use serde_json::{Map, Value as Json, json};

pub const NAME: &str = "get_node_statistics";
/// Labels reported in one answer; more are cut with `truncated: true`.
const MAX_LABELS: usize = 100;

pub fn spec() -> (&'static str, &'static str, Json) {
    (
        NAME,
        "Count the graph's nodes per label (class), or for one label, with a few sample nodes of each.",
        json!({
            "type": "object",
            "properties": {
                "label": {"type": "string", "description": "Only this label (class), e.g. \"PurchaseOrder\"; omit for all labels."},
                "sample_size": {"type": "integer", "minimum": 0, "maximum": 10, "default": 3, "description": "Sample nodes per label."}
            },
            "additionalProperties": false
        }),
    )
}

pub fn run<T: Transport>(client: &Graph<'_, T>, arguments: &str) -> Result<ToolOutput, Error> {
    let args = args::object(NAME, arguments, &["label", "sample_size"])?;
    let label = args::optional_string(&args, "label")?;
    let sample_size = args::optional_integer(&args, "sample_size", 3, 0, 10)?;

    let (counts, truncated) = match &label {
        Some(label) => {
            require_odd_label_first(client, label)?;
            let statement = format!("MATCH (n:{}) RETURN count(n) AS count", quote_name(label));
            let result = client
                .run(&statement, Map::new(), AccessMode::Read)
                .map_err(graph_error)?;
            let count = result
                .rows
                .first()
                .and_then(|r| r.first())
                .and_then(Value::as_i64)
                .unwrap_or(0);
            require_label_unless_found(client, label, count > 0)?;
            (vec![(label.clone(), count)], false)
        }
        None => {
            // One count per label, each answered by Neo4j's count store (a label's count
            // is kept, not counted), so this costs the number of labels, not of nodes.
            let known = client.labels(&[]).map_err(graph_error)?;
            let truncated = known.len() > MAX_LABELS;
            let mut params = Map::new();
            let parts: Vec<String> = known
                .iter()
                .take(MAX_LABELS)
                .enumerate()
                .map(|(i, label)| {
                    params.insert(format!("l{i}"), json!(label));
                    format!(
                        // The count alone in its own WITH: a parameter beside the aggregate
                        // would be a grouping key, and Neo4j would scan instead.
                        "MATCH (n:{}) WITH count(n) AS count RETURN $l{i} AS label, count",
                        quote_name(label)
                    )
                })
                .collect();
            let mut counts: Vec<(String, i64)> = if parts.is_empty() {
                Vec::new()
            } else {
                client
                    .run(&parts.join(" UNION ALL "), params, AccessMode::Read)
                    .map_err(graph_error)?
                    .rows
                    .iter()
                    .filter_map(|r| Some((r.first()?.as_str()?.to_string(), r.get(1)?.as_i64()?)))
                    // A label with no node left (Neo4j keeps a label token after its last
                    // node is gone) is not one of the graph's classes.
                    .filter(|(_, count)| *count > 0)
                    .collect()
            };
            counts.sort();
            (counts, truncated)
        }
    };
    let total = match &label {
        Some(_) => counts.iter().map(|(_, c)| c).sum(),
        None => {
            let result = client
                .run(
                    "MATCH (n) RETURN count(n) AS count",
                    Map::new(),
                    AccessMode::Read,
                )
                .map_err(graph_error)?;
            result
                .rows
                .first()
                .and_then(|r| r.first())
                .and_then(Value::as_i64)
                .unwrap_or(0)
        }
    };

    let mut entries = Vec::new();
    for (name, count) in &counts {
        let mut samples = Vec::new();
        if sample_size > 0 && *count > 0 {
            let statement = format!("MATCH (n:{}) RETURN n LIMIT $limit", quote_name(name));
            let mut params = Map::new();
            params.insert("limit".into(), json!(sample_size));
            let result = client
                .run(&statement, params, AccessMode::Read)
                .map_err(graph_error)?;
            samples = result
                .rows
                .iter()
                .filter_map(|r| r.first())
                .map(sample)
                .collect();
        }
        entries.push(json!({"label": name, "count": count, "samples": samples}));
    }
    let summary = match (&label, counts.iter().max_by_key(|(_, c)| *c)) {
        (Some(label), _) => format!("{label}: {total} nodes"),
        (None, Some((largest, n))) => format!(
            "{} labels, {total} nodes; largest: {largest} ({n})",
            counts.len()
        ),
        (None, None) => "the graph is empty".to_string(),
    };
    Ok(ToolOutput {
        data: json!({"total_nodes": total, "labels": entries}),
        summary,
        graph: None,
        truncated,
    })
}

/// A node as a compact sample: its element id and properties.
fn sample(value: &Value) -> Json {
    match value {
        Value::Node {
            element_id,
            properties,
            ..
        } => json!({
            "element_id": element_id,
            "properties": crate::neighbors::props(properties),
        }),
        other => other.to_plain_json(),
    }
}
