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
        let classes: Vec<Json> = result
            .rows
            .iter()
            .map(|row| {
                let properties: Vec<Json> = match row.get(2) {
                    Some(Value::List(items)) => items
                        .iter()
                        .filter_map(Value::as_str)
                        .map(|p| match p.split_once(':') {
                            Some((name, ty)) => json!({"name": name, "type": ty}),
                            None => json!({"name": p, "type": Json::Null}),
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
                .filter_map(|r| {
                    r.first()?
                        .as_str()
                        .map(|k| json!({"name": k, "type": Json::Null}))
                })
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
        let items = result
            .rows
            .iter()
            .map(|r| json!({"name": text(r.first()), "source": text(r.get(1)), "target": text(r.get(2)), "description": text(r.get(3))}))
            .collect();
        (items, "ontology", false)
    } else {
        let types = client.relationship_types(&[]).map_err(graph_error)?;
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
