//! `get_instance_neighbors`: the instances around one instance, up to 3 hops, as a subgraph.

use crate::args;
use crate::catalog::ToolOutput;
use crate::cypher::quote_name;
use crate::graph_error::graph_error;
use crate::instance::{Resolved, resolve};
use crate::schema::{
    require_label_unless_found, require_odd_label_first, require_relationship_type,
};
use crate::session::Graph;
use kg_graph_profile::{Profile, text_of};
use kg_wit::types::{Error, ErrorCode, GraphData, GraphEdge, GraphNode};
use neo4j_client::{AccessMode, Transport, Value};
use serde_json::{Map, Value as Json, json};
use std::collections::BTreeMap;

pub const NAME: &str = "get_instance_neighbors";

pub fn spec() -> (&'static str, &'static str, Json) {
    (
        NAME,
        "Show the instances connected to one instance within 1 to 3 hops, optionally only along some relationship types and in one direction, and how many relationships of each type the instance has. The instance is its key value (e.g. \"PO-0003\"; add class_name when the value is not unique across classes), its key as the JSON object an answer gave (needed for a key of several properties, e.g. {\"country\": \"US\", \"subd\": \"Illinois\", \"name\": \"Springfield\"}), its caption (name), or an element_id from an earlier answer. Each neighbour comes with its label, its key (also as a field of its own, e.g. `id`: use it as `instance` here or as the entity id of an action), its caption, its element_id and its distance. A node with many relationships answers its first `limit` paths and the counts.",
        json!({
            "type": "object",
            "properties": {
                "instance": {"type": "string", "description": "The instance's key value (e.g. \"PO-0003\"), its key object as JSON text, its caption (name), or its element_id."},
                "class_name": {"type": "string", "description": "The instance's class (label), when its key or name is not unique across classes."},
                "hops": {"type": "integer", "minimum": 1, "maximum": 3, "default": 1},
                "direction": {"type": "string", "enum": ["out", "in", "both"], "default": "both"},
                "relationship_types": {"type": "array", "items": {"type": "string"}, "maxItems": 20},
                "limit": {"type": "integer", "minimum": 1, "maximum": 200, "default": 50, "description": "Most paths to follow."}
            },
            "required": ["instance"],
            "additionalProperties": false
        }),
    )
}

pub fn run<T: Transport>(client: &Graph<'_, T>, arguments: &str) -> Result<ToolOutput, Error> {
    let args = args::object(
        NAME,
        arguments,
        &[
            "instance",
            "class_name",
            "hops",
            "direction",
            "relationship_types",
            "limit",
        ],
    )?;
    let reference = args::optional_string(&args, "instance")?
        .ok_or_else(|| args::invalid("`instance` is required"))?;
    let class = args::optional_string(&args, "class_name")?;
    let hops = args::optional_integer(&args, "hops", 1, 1, 3)?;
    let limit = args::optional_integer(&args, "limit", 50, 1, 200)?;
    let direction = args::optional_string(&args, "direction")?.unwrap_or_else(|| "both".into());
    let (left, right) = match direction.as_str() {
        "out" => ("-", "->"),
        "in" => ("<-", "-"),
        "both" => ("-", "-"),
        other => {
            return Err(args::invalid(format!(
                "`direction` must be out, in or both, got \"{other}\""
            )));
        }
    };
    let types: Vec<String> = match args.get("relationship_types") {
        None | Some(Json::Null) => Vec::new(),
        Some(Json::Array(items)) if items.len() <= 20 => items
            .iter()
            .map(|t| {
                t.as_str()
                    .filter(|s| s.chars().count() <= 200)
                    .map(str::to_string)
                    .ok_or_else(|| {
                        args::invalid(
                            "`relationship_types` must be strings of at most 200 characters",
                        )
                    })
            })
            .collect::<Result<_, _>>()?,
        Some(_) => {
            return Err(args::invalid(
                "`relationship_types` must be an array of at most 20 strings",
            ));
        }
    };
    if !types.is_empty() {
        let needed: Vec<&str> = types.iter().map(String::as_str).collect();
        let known = client.relationship_types(&needed).map_err(graph_error)?;
        for rel_type in &types {
            require_relationship_type(rel_type, &known)?;
        }
    }
    // The class is a label of the instance's pattern: an instance found proves it exists;
    // none found, an unknown class is the error to give, as when it was checked first.
    if let Some(class) = &class {
        require_odd_label_first(client, class)?;
    }
    let instance = match (resolve(client, &reference, class.as_deref()), &class) {
        (Err(e), Some(class)) if e.code == ErrorCode::NotFound => {
            require_label_unless_found(client, class, false)?;
            return Err(e);
        }
        (key, _) => key?,
    };
    let view = client.view();
    // Asked for no type while some type is hidden: every type the audience may see,
    // spelt out, so the expansion never crosses a hidden relationship.
    let visible_types;
    let walked: &[String] = if types.is_empty() && !view.hidden_types.is_empty() {
        visible_types = client.relationship_types(&[]).map_err(graph_error)?;
        &visible_types
    } else {
        &types
    };
    let type_filter = if walked.is_empty() {
        String::new()
    } else {
        format!(
            ":{}",
            walked
                .iter()
                .map(|t| quote_name(t))
                .collect::<Vec<_>>()
                .join("|")
        )
    };
    // No ORDER BY: the expansion stops at the limit, so a node with a million
    // relationships costs its first page, not its degree.
    // One hop is a fixed-length pattern: Neo4j expands it lazily, where a variable-length
    // one reads the whole adjacency list of a hub before the limit applies.
    let length = if hops == 1 {
        String::new()
    } else {
        format!("*1..{hops}")
    };
    // Nodes of hidden labels are neither reached, passed through nor counted.
    let unseen = |var: &str| view.label_exclusion(var);
    let (unseen_path, unseen_other) = match (unseen("m"), unseen("o"), unseen("x")) {
        (Some(m), Some(o), Some(_)) if hops == 1 => (format!(" WHERE {m}"), format!(" WHERE {o}")),
        (Some(_), Some(o), Some(x)) => (
            format!(" WHERE all(x IN nodes(p) WHERE {x})"),
            format!(" WHERE {o}"),
        ),
        _ => (String::new(), String::new()),
    };
    let other = if unseen_other.is_empty() { "" } else { "o" };
    // The page and the degree per type in one statement (one round trip, not two). The
    // types counted: those asked for, else every type the graph has (a list the request
    // reads once).
    let all;
    let degree_types: &[String] = if types.is_empty() {
        all = client.relationship_types(&[]).map_err(graph_error)?;
        &all
    } else {
        &types
    };
    let degree_types: Vec<&String> = degree_types.iter().take(MAX_DEGREE_TYPES).collect();
    let counts: Vec<String> = degree_types
        .iter()
        .map(|t| {
            format!(
                "COUNT {{ (n){left}[:{}]{right}({other}){unseen_other} }}",
                quote_name(t)
            )
        })
        .collect();
    let statement = format!(
        "MATCH (n) WHERE {} \
         CALL (n) {{ MATCH p = (n){left}[{type_filter}{length}]{right}(m){unseen_path} WITH p LIMIT $limit RETURN collect(p) AS paths }} \
         RETURN paths, [{}] AS degrees",
        Resolved::condition("n", "id"),
        counts.join(", ")
    );
    let mut params = Map::new();
    if !view.hidden_labels.is_empty() {
        params.insert(
            kg_graph_profile::policy::HIDDEN_LABELS_PARAMETER.into(),
            view.hidden_labels_parameter(),
        );
    }
    params.insert("id".into(), json!(instance.element_id));
    params.insert("limit".into(), json!(limit + 1));
    let mut row = client
        .run(&statement, params, AccessMode::Read)
        .map_err(graph_error)?
        .rows
        .into_iter()
        .next()
        .unwrap_or_default()
        .into_iter();
    let paths = match row.next() {
        Some(Value::List(paths)) => paths,
        _ => Vec::new(),
    };
    let degree = degree(&degree_types, row.next());
    let truncated = paths.len() as i64 > limit;

    // Nodes keyed by element id with their smallest distance; edges deduplicated.
    let mut nodes: BTreeMap<String, (GraphNode, usize)> = BTreeMap::new();
    let profile = client.profile().map_err(graph_error)?;
    let mut keys: BTreeMap<String, (String, Map<String, Json>)> = BTreeMap::new();
    let mut edges: BTreeMap<String, GraphEdge> = BTreeMap::new();
    let mut start = None;
    for path in paths.iter().take(limit as usize) {
        let Value::Path {
            nodes: path_nodes,
            relationships,
        } = path
        else {
            continue;
        };
        for (distance, node) in path_nodes.iter().enumerate() {
            if let Some(graph_node) = graph_node(&profile, node) {
                if let Some(key) = business_key(&profile, node) {
                    keys.insert(graph_node.id.clone(), key);
                }
                if distance == 0 {
                    start = Some(graph_node.id.clone());
                }
                let entry = nodes
                    .entry(graph_node.id.clone())
                    .or_insert((graph_node, distance));
                entry.1 = entry.1.min(distance);
            }
        }
        for rel in relationships {
            if let Some(edge) = graph_edge(rel) {
                edges.entry(edge.id.clone()).or_insert(edge);
            }
        }
    }
    let neighbors: Vec<Json> = nodes
        .values()
        .filter(|(n, _)| Some(&n.id) != start.as_ref())
        .map(|(n, distance)| neighbor(n, *distance, keys.get(&n.id)))
        .collect();
    let relationships: Vec<Json> = edges
        .values()
        .map(|e| json!({"type": e.rel_type, "source": e.source, "target": e.target}))
        .collect();
    let mut by_label: BTreeMap<&str, usize> = BTreeMap::new();
    for (n, _) in nodes
        .values()
        .filter(|(n, _)| Some(&n.id) != start.as_ref())
    {
        *by_label
            .entry(n.labels.first().map_or("?", String::as_str))
            .or_default() += 1;
    }
    let summary = format!(
        "{} neighbours of {} within {hops} hop{}: {}{}",
        neighbors.len(),
        instance.caption,
        if hops == 1 { "" } else { "s" },
        by_label
            .iter()
            .map(|(l, n)| format!("{n} {l}"))
            .collect::<Vec<_>>()
            .join(", "),
        if truncated {
            " (more exist; raise limit)"
        } else {
            ""
        }
    );
    Ok(ToolOutput {
        data: json!({"instance": instance.describe(), "degree": degree, "neighbors": neighbors, "relationships": relationships}),
        summary,
        graph: Some(GraphData {
            nodes: nodes.into_values().map(|(n, _)| n).collect(),
            edges: edges.into_values().collect(),
        }),
        truncated,
    })
}

/// How other tools and actions address an instance: its profiled label and key.
pub fn business_key(profile: &Profile, node: &Value) -> Option<(String, Map<String, Json>)> {
    let Value::Node {
        labels, properties, ..
    } = node
    else {
        return None;
    };
    profile.key_of(labels, &plain(properties))
}

/// One neighbour for the agent, compact: its element id, labels, label and key (and each
/// key property as a field of its own: `"id": "PO-0003"`), its caption and its distance
/// in hops.
fn neighbor(node: &GraphNode, distance: usize, key: Option<&(String, Map<String, Json>)>) -> Json {
    let mut entry = Map::new();
    entry.insert("element_id".into(), json!(node.id));
    entry.insert("labels".into(), json!(node.labels));
    if let Some((label, key)) = key {
        entry.insert("label".into(), json!(label));
        for (property, value) in key {
            entry.entry(property.clone()).or_insert(value.clone());
        }
        entry.insert("key".into(), Json::Object(key.clone()));
    }
    entry.insert("caption".into(), json!(node.caption));
    entry.insert("distance".into(), json!(distance));
    Json::Object(entry)
}

/// How many relationships of each type (of `types`, or of every type the graph has, up
/// to [`MAX_DEGREE_TYPES`]) the instance has in the direction asked, from the statement's
/// `degrees` (in `types` order), types without any left out. Each count is a `COUNT {}` on
/// one type and direction, which Neo4j answers from the node's degree store, not by
/// expanding the relationships.
fn degree(types: &[&String], degrees: Option<Value>) -> Json {
    let Some(Value::List(degrees)) = degrees else {
        return json!({});
    };
    let mut counts = Map::new();
    for (t, n) in types.iter().zip(&degrees) {
        if let Some(n) = n.as_i64().filter(|n| *n > 0) {
            counts.insert(t.to_string(), json!(n));
        }
    }
    Json::Object(counts)
}

/// Relationship types whose degree one answer counts, at most.
const MAX_DEGREE_TYPES: usize = 50;

/// A node's or relationship's properties as compact JSON (see `Value::to_plain_json`).
pub(crate) fn plain(properties: &BTreeMap<String, Value>) -> Map<String, Json> {
    properties
        .iter()
        .map(|(k, v)| (k.clone(), v.to_plain_json()))
        .collect()
}

/// What a person calls a node: its profiled caption, else its `name` when it has one,
/// else its single key; None leaves the element id to stand in.
pub fn caption(
    profile: &Profile,
    labels: &[String],
    properties: &Map<String, Json>,
) -> Option<String> {
    labels
        .iter()
        .filter_map(|l| profile.label(l)?.caption.as_deref())
        .find_map(|p| properties.get(p).and_then(text_of))
        .or_else(|| properties.get("name").and_then(text_of))
        .or_else(|| profile.caption_of(labels, properties))
}

pub fn props(properties: &BTreeMap<String, Value>) -> Json {
    Json::Object(plain(properties))
}

pub fn graph_edge(value: &Value) -> Option<GraphEdge> {
    let Value::Relationship {
        element_id,
        start_node_element_id,
        end_node_element_id,
        rel_type,
        properties,
    } = value
    else {
        return None;
    };
    Some(GraphEdge {
        id: element_id.clone(),
        rel_type: rel_type.clone(),
        source: start_node_element_id.clone(),
        target: end_node_element_id.clone(),
        properties: props(properties).to_string(),
    })
}

pub fn graph_node(profile: &Profile, value: &Value) -> Option<GraphNode> {
    let Value::Node {
        element_id,
        labels,
        properties,
    } = value
    else {
        return None;
    };
    let caption =
        caption(profile, labels, &plain(properties)).unwrap_or_else(|| element_id.clone());
    Some(GraphNode {
        id: element_id.clone(),
        labels: labels.clone(),
        caption,
        properties: props(properties).to_string(),
    })
}
