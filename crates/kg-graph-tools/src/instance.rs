//! Addressing an instance by its `id` or its `name`. An ambiguous name returns the
//! candidates instead of guessing.

use crate::cypher::quote_name;
use crate::graph_error::graph_error;
use crate::ontology::META_LABELS;
use crate::session::Graph;
use kg_wit::types::{Error, ErrorCode};
use neo4j_client::{AccessMode, Transport, Value};
use serde_json::{Map, Value as Json, json};

/// How to match the resolved instance again in a later query: a property and its value.
pub struct InstanceKey {
    pub property: &'static str,
    pub value: String,
    pub caption: String,
}

impl InstanceKey {
    /// `WHERE` condition on `var` (parameter `$key`).
    pub fn condition(&self, var: &str) -> String {
        format!("{var}.{} = $key", quote_name(self.property))
    }
}

pub fn resolve<T: Transport>(
    client: &Graph<'_, T>,
    reference: &str,
    class: Option<&str>,
) -> Result<InstanceKey, Error> {
    let label = class
        .map(|c| format!(":{}", quote_name(c)))
        .unwrap_or_default();
    let not_meta = META_LABELS
        .map(|l| format!("NOT n:{}", quote_name(l)))
        .join(" AND ");
    let statement = format!(
        "MATCH (n{label}) WHERE {not_meta} AND (n.id = $ref OR CASE WHEN n.name STARTS WITH '' THEN toLower(n.name) END = $lower) \
         RETURN n, CASE WHEN n.id = $ref THEN 0 ELSE 1 END AS by_name ORDER BY by_name, n.id LIMIT 11"
    );
    let mut params = Map::new();
    params.insert("ref".into(), json!(reference));
    params.insert("lower".into(), json!(reference.to_lowercase()));
    let result = client
        .run(&statement, params, AccessMode::Read)
        .map_err(graph_error)?;
    let nodes: Vec<(&Value, bool)> = result
        .rows
        .iter()
        .filter_map(|r| Some((r.first()?, r.get(1)?.as_i64()? == 1)))
        .collect();
    let prop = |node: &Value, k: &str| match node {
        Value::Node { properties, .. } => properties
            .get(k)
            .and_then(Value::as_str)
            .map(str::to_string),
        _ => None,
    };
    let by_id = nodes.first().is_some_and(|(_, by_name)| !by_name);
    match nodes.as_slice() {
        [] => {
            let mut e = Error::new(
                ErrorCode::NotFound,
                format!("no instance with id or name \"{reference}\""),
            );
            e.detail = Some(json!({"hint": "use search_instances to find it"}).to_string());
            Err(e)
        }
        // An exact id wins over names; otherwise the name must be unique.
        [(node, _), ..] if by_id || nodes.len() == 1 => {
            let caption = prop(node, "name")
                .or_else(|| prop(node, "id"))
                .unwrap_or_default();
            Ok(match prop(node, "id") {
                Some(id) => InstanceKey {
                    property: "id",
                    value: id,
                    caption,
                },
                None => InstanceKey {
                    property: "name",
                    value: prop(node, "name").unwrap_or_default(),
                    caption,
                },
            })
        }
        candidates => {
            let listed: Vec<Json> = candidates
                .iter()
                .take(10)
                .map(|(node, _)| match node {
                    Value::Node { labels, .. } => json!({"id": prop(node, "id"), "name": prop(node, "name"), "labels": labels}),
                    other => other.to_plain_json(),
                })
                .collect();
            let mut e = Error::new(
                ErrorCode::Conflict,
                format!(
                    "\"{reference}\" names {} instances; say which one by id",
                    listed.len()
                ),
            );
            e.detail = Some(json!({"candidates": listed}).to_string());
            Err(e)
        }
    }
}
