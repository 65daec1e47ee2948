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

    // One statement answers the counts, the samples and (for all labels) the total, so
    // the call costs two round trips (the label list, then this) however many labels the
    // graph has: a statement per label's samples made it twelve on the demo.
    let (labels, truncated) = match &label {
        Some(label) => {
            require_odd_label_first(client, label)?;
            (vec![label.clone()], false)
        }
        None => {
            let known = client.labels(&[]).map_err(graph_error)?;
            let truncated = known.len() > MAX_LABELS;
            (known.into_iter().take(MAX_LABELS).collect(), truncated)
        }
    };
    // Read with the label list, once per request.
    let hidden = client.hidden_labels_in_graph().map_err(graph_error)?;
    let (statement, params) = counts_and_samples(&labels, label.is_none(), sample_size, &hidden);
    let rows = client
        .run(&statement, params, AccessMode::Read)
        .map_err(graph_error)?
        .rows;
    let mut total = 0;
    let mut counts: Vec<(String, i64, Vec<Json>)> = Vec::new();
    for row in &rows {
        let count = row.get(1).and_then(Value::as_i64).unwrap_or(0);
        match row.first().and_then(Value::as_str) {
            Some(name) => {
                let samples = match row.get(2) {
                    Some(Value::List(nodes)) => nodes
                        .iter()
                        .filter(|n| !matches!(n, Value::Null))
                        .map(sample)
                        .collect(),
                    _ => Vec::new(),
                };
                counts.push((name.to_string(), count, samples));
            }
            // The branch counting every node.
            None => total = count,
        }
    }
    if let Some(label) = &label {
        let count = counts.first().map_or(0, |(_, c, _)| *c);
        require_label_unless_found(client, label, count > 0)?;
        total = count;
        if counts.is_empty() {
            counts.push((label.clone(), 0, Vec::new()));
        }
    }
    // A label with no node left (Neo4j keeps a label token after its last node is gone)
    // is not one of the graph's classes.
    counts.retain(|(_, count, _)| label.is_some() || *count > 0);
    counts.sort_by(|a, b| a.0.cmp(&b.0));

    let entries: Vec<Json> = counts
        .iter()
        .map(|(name, count, samples)| json!({"label": name, "count": count, "samples": samples}))
        .collect();
    let summary = match (&label, counts.iter().max_by_key(|(_, c, _)| *c)) {
        (Some(label), _) => format!("{label}: {total} nodes"),
        (None, Some((largest, n, _))) => format!(
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

/// One statement, a `UNION ALL` branch per label: its count from Neo4j's count store
/// (a label's count is kept, not counted; the count alone in its own `WITH`, since a
/// parameter beside the aggregate would be a grouping key and Neo4j would scan instead),
/// then up to `sample_size` of its nodes, collected; and with `with_total` a branch
/// counting every node (label `null`). Rows: `label, count, samples`. A label with no
/// node answers no row when samples are asked for (the subquery has none to join).
///
/// Nodes of a label the audience may not see (`hidden`: those the graph has) are neither
/// counted nor sampled, not even under another label they carry. A count stays the count
/// store's, less the hidden nodes counted by scanning the hidden labels
/// (`MATCH (h:H1|H2) WHERE h:Label`: the planner scans whichever label is smaller), so a
/// policy does not turn a label's count into a scan of the label.
fn counts_and_samples(
    labels: &[String],
    with_total: bool,
    sample_size: i64,
    hidden: &[String],
) -> (String, Map<String, Json>) {
    let mut params = Map::new();
    params.insert("limit".into(), json!(sample_size));
    let (unseen_s, less_hidden) = if hidden.is_empty() {
        (String::new(), None)
    } else {
        params.insert(
            kg_graph_profile::policy::HIDDEN_LABELS_PARAMETER.into(),
            json!(hidden),
        );
        let union = hidden
            .iter()
            .map(|l| quote_name(l))
            .collect::<Vec<_>>()
            .join("|");
        (
            format!(
                " WHERE none(l IN labels(s) WHERE l IN ${})",
                kg_graph_profile::policy::HIDDEN_LABELS_PARAMETER
            ),
            Some(union),
        )
    };
    // `count` of the label (the count store's), less its nodes that carry a hidden label.
    let counted = |pattern: &str, also: &str| match &less_hidden {
        None => format!("MATCH {pattern} WITH count(n) AS count "),
        Some(union) => format!(
            "MATCH {pattern} WITH count(n) AS all \
             CALL () {{ MATCH (h:{union}){also} RETURN count(h) AS hidden }} \
             WITH all - hidden AS count "
        ),
    };
    let mut parts: Vec<String> = labels
        .iter()
        .enumerate()
        .map(|(i, label)| {
            params.insert(format!("l{i}"), json!(label));
            let label = quote_name(label);
            let count = counted(&format!("(n:{label})"), &format!(" WHERE h:{label}"));
            if sample_size > 0 {
                format!(
                    "{count}CALL () {{ MATCH (s:{label}){unseen_s} RETURN s LIMIT $limit }} \
                     RETURN $l{i} AS label, count, collect(s) AS samples"
                )
            } else {
                format!("{count}RETURN $l{i} AS label, count, [] AS samples")
            }
        })
        .collect();
    if with_total {
        let count = counted("(n)", "");
        parts.push(format!("{count}RETURN null AS label, count, [] AS samples"));
    }
    (parts.join(" UNION ALL "), params)
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
