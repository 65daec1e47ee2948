//! `get_ontology_classes` and `get_ontology_relationships`: from the ontology metadata in
//! the graph (`:OntologyClass`, `:OntologyRelationship`), or, when a graph has none, from
//! schema introspection (labels, sampled property keys, sampled endpoints).

use crate::args;
use crate::catalog::ToolOutput;
use crate::cypher::quote_name;
use crate::graph_error::graph_error;
use crate::session::Graph;
use kg_wit::types::Error;
use neo4j_client::{AccessMode, Transport, Value};
use serde_json::{Map, Value as Json, json};

pub const CLASSES: &str = "get_ontology_classes";
pub const RELATIONSHIPS: &str = "get_ontology_relationships";
/// Labels that hold the ontology itself, not domain data.
pub const META_LABELS: [&str; 2] = ["OntologyClass", "OntologyRelationship"];
const MAX_ITEMS: usize = 100;

pub fn specs() -> Vec<(&'static str, &'static str, Json)> {
    let no_arguments = json!({"type": "object", "properties": {}, "additionalProperties": false});
    vec![
        (
            CLASSES,
            "List the classes (node labels) of the knowledge graph with their descriptions and properties.",
            no_arguments.clone(),
        ),
        (
            RELATIONSHIPS,
            "List the relationship types of the knowledge graph with their source and target classes and descriptions.",
            no_arguments,
        ),
    ]
}

fn text(v: Option<&Value>) -> Json {
    v.and_then(Value::as_str)
        .map_or(Json::Null, |s| Json::String(s.to_string()))
}

pub fn classes<T: Transport>(client: &Graph<'_, T>, arguments: &str) -> Result<ToolOutput, Error> {
    args::object(CLASSES, arguments, &[])?;
    let known = client.labels(&[]).map_err(graph_error)?;
    let (classes, source) = if known.iter().any(|l| l == "OntologyClass") {
        let result = client
            .run(
                "MATCH (c:OntologyClass) RETURN c.name AS name, c.description AS description, c.properties AS properties ORDER BY name LIMIT 500",
                Map::new(),
                AccessMode::Read,
            )
            .map_err(graph_error)?;
        // The ontology is data: its classes and properties pass the policy like the
        // graph's own labels and properties do.
        let view = client.view();
        let classes: Vec<Json> = result
            .rows
            .iter()
            .filter(|row| row.first().and_then(Value::as_str).is_none_or(|c| view.label_visible(c)))
            .map(|row| {
                let class = row.first().and_then(Value::as_str).unwrap_or_default();
                let properties: Vec<Json> = match row.get(2) {
                    Some(Value::List(items)) => items
                        .iter()
                        .filter_map(Value::as_str)
                        .map(|p| p.split_once(':').unwrap_or((p, "")))
                        .filter(|(name, _)| view.node_property_visible(&[class], name))
                        .map(|(name, ty)| match ty {
                            "" => json!({"name": name, "type": Json::Null}),
                            ty => json!({"name": name, "type": ty}),
                        })
                        .collect(),
                    _ => Vec::new(),
                };
                json!({"name": text(row.first()), "description": text(row.get(1)), "properties": properties})
            })
            .collect();
        (classes, "ontology")
    } else {
        let profile = client.known_profile();
        let view = client.view();
        let mut classes = Vec::new();
        for label in known
            .iter()
            .filter(|l| !META_LABELS.contains(&l.as_str()))
            .take(MAX_ITEMS)
        {
            let statement = format!(
                "MATCH (n:{}) WITH n LIMIT 100 UNWIND keys(n) AS key RETURN DISTINCT key ORDER BY key LIMIT 200",
                quote_name(label)
            );
            let result = client
                .run(&statement, Map::new(), AccessMode::Read)
                .map_err(graph_error)?;
            let properties: Vec<Json> = result
                .rows
                .iter()
                .filter_map(|r| r.first()?.as_str())
                .filter(|k| view.node_property_visible(&[label.as_str()], k))
                .map(|k| json!({"name": k, "type": Json::Null}))
                .collect();
            // The graph profile's description, when it declares one.
            let description = profile
                .label(label)
                .and_then(|l| l.description.clone())
                .map_or(Json::Null, Json::String);
            classes
                .push(json!({"name": label, "description": description, "properties": properties}));
        }
        (classes, "schema")
    };
    let names: Vec<&str> = classes.iter().filter_map(|c| c["name"].as_str()).collect();
    Ok(ToolOutput {
        summary: format!(
            "{} classes (from the {source}): {}",
            classes.len(),
            names.join(", ")
        ),
        data: json!({"source": source, "classes": classes}),
        graph: None,
        truncated: source == "schema" && known.len() > MAX_ITEMS,
    })
}

pub fn relationships<T: Transport>(
    client: &Graph<'_, T>,
    arguments: &str,
) -> Result<ToolOutput, Error> {
    args::object(RELATIONSHIPS, arguments, &[])?;
    let known = client.labels(&[]).map_err(graph_error)?;
    let (relationships, source, truncated) = if known.iter().any(|l| l == "OntologyRelationship") {
        let result = client
            .run(
                "MATCH (r:OntologyRelationship) RETURN r.name AS name, r.source AS source, r.target AS target, r.description AS description ORDER BY name LIMIT 500",
                Map::new(),
                AccessMode::Read,
            )
            .map_err(graph_error)?;
        let view = client.view();
        let named = |r: &Vec<Value>, i: usize| {
            r.get(i)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let items = result
            .rows
            .iter()
            .filter(|r| {
                view.type_visible(&named(r, 0))
                    && view.label_visible(&named(r, 1))
                    && view.label_visible(&named(r, 2))
            })
            .map(|r| json!({"name": text(r.first()), "source": text(r.get(1)), "target": text(r.get(2)), "description": text(r.get(3))}))
            .collect();
        (items, "ontology", false)
    } else {
        let types = client.relationship_types(&[]).map_err(graph_error)?;
        let view = client.view();
        let mut items = Vec::new();
        for rel_type in types.iter().take(MAX_ITEMS) {
            // Endpoints as observed on a sample of the relationships.
            let statement = format!(
                "MATCH (a)-[:{}]->(b) WITH labels(a) AS s, labels(b) AS t LIMIT 1000 \
                 UNWIND s AS source UNWIND t AS target RETURN DISTINCT source, target ORDER BY source, target LIMIT 20",
                quote_name(rel_type)
            );
            let result = client
                .run(&statement, Map::new(), AccessMode::Read)
                .map_err(graph_error)?;
            for row in &result.rows {
                let end_hidden = |i: usize| {
                    row.get(i)
                        .and_then(Value::as_str)
                        .is_some_and(|l| !view.label_visible(l))
                };
                if end_hidden(0) || end_hidden(1) {
                    continue;
                }
                items.push(json!({"name": rel_type, "source": text(row.first()), "target": text(row.get(1)), "description": Json::Null}));
            }
        }
        (items, "schema", types.len() > MAX_ITEMS)
    };
    let summary = format!(
        "{} relationship types (from the {source}): {}",
        relationships.len(),
        relationships
            .iter()
            .map(|r| format!(
                "({})-[:{}]->({})",
                r["source"].as_str().unwrap_or("?"),
                r["name"].as_str().unwrap_or("?"),
                r["target"].as_str().unwrap_or("?")
            ))
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok(ToolOutput {
        data: json!({"source": source, "relationships": relationships}),
        summary,
        graph: None,
        truncated,
    })
}
