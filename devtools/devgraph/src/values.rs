//! Grafeo values to the Query API's JSON shapes (plain and typed) and JSON parameters to
//! Grafeo values. Grafeo returns nodes as maps with `_id`/`_labels` and relationships as
//! maps with `_id`/`_type`/`_source`/`_target`; Neo4j clients expect element objects.

use base64::Engine;
use grafeo::Value;
use serde_json::{Map, Value as Json, json};

/// Neo4j-shaped element ids: `4:` for nodes and `5:` for relationships, as Neo4j 5 does.
pub fn node_element_id(id: i64) -> String {
    format!("4:devgraph:{id}")
}

pub fn relationship_element_id(id: i64) -> String {
    format!("5:devgraph:{id}")
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Plain,
    Typed,
}

enum Element<'a> {
    Node {
        id: i64,
        labels: Vec<String>,
        properties: Vec<(&'a str, &'a Value)>,
    },
    Relationship {
        id: i64,
        rel_type: String,
        source: i64,
        target: i64,
        properties: Vec<(&'a str, &'a Value)>,
    },
}

fn element(value: &Value) -> Option<Element<'_>> {
    let Value::Map(map) = value else { return None };
    let get = |k: &str| {
        map.iter()
            .find(|(key, _)| key.as_str() == k)
            .map(|(_, v)| v)
    };
    let int = |k: &str| match get(k) {
        Some(Value::Int64(i)) => Some(*i),
        _ => None,
    };
    let properties = || {
        map.iter()
            .filter(|(k, _)| !k.as_str().starts_with('_'))
            .map(|(k, v)| (k.as_str(), v))
            .collect()
    };
    let id = int("_id")?;
    if let Some(Value::List(labels)) = get("_labels") {
        let labels = labels.iter().filter_map(|l| match l {
            Value::String(s) => Some(s.to_string()),
            _ => None,
        });
        return Some(Element::Node {
            id,
            labels: labels.collect(),
            properties: properties(),
        });
    }
    if let (Some(Value::String(t)), Some(source), Some(target)) =
        (get("_type"), int("_source"), int("_target"))
    {
        return Some(Element::Relationship {
            id,
            rel_type: t.to_string(),
            source,
            target,
            properties: properties(),
        });
    }
    None
}

/// One value in the requested format.
pub fn to_json(value: &Value, format: Format) -> Json {
    let typed = |t: &str, v: Json| match format {
        Format::Typed => json!({"$type": t, "_value": v}),
        Format::Plain => v,
    };
    let props = |p: &[(&str, &Value)]| -> Json {
        Json::Object(
            p.iter()
                .map(|(k, v)| (k.to_string(), to_json(v, format)))
                .collect(),
        )
    };
    if let Some(element) = element(value) {
        return match (element, format) {
            (
                Element::Node {
                    id,
                    labels,
                    properties,
                },
                Format::Plain,
            ) => {
                json!({"elementId": node_element_id(id), "labels": labels, "properties": props(&properties)})
            }
            (
                Element::Node {
                    id,
                    labels,
                    properties,
                },
                Format::Typed,
            ) => typed(
                "Node",
                json!({"_element_id": node_element_id(id), "_labels": labels, "_properties": props(&properties)}),
            ),
            (
                Element::Relationship {
                    id,
                    rel_type,
                    source,
                    target,
                    properties,
                },
                Format::Plain,
            ) => json!({
                "elementId": relationship_element_id(id),
                "startNodeElementId": node_element_id(source),
                "endNodeElementId": node_element_id(target),
                "type": rel_type,
                "properties": props(&properties),
            }),
            (
                Element::Relationship {
                    id,
                    rel_type,
                    source,
                    target,
                    properties,
                },
                Format::Typed,
            ) => typed(
                "Relationship",
                json!({
                    "_element_id": relationship_element_id(id),
                    "_start_node_element_id": node_element_id(source),
                    "_end_node_element_id": node_element_id(target),
                    "_type": rel_type,
                    "_properties": props(&properties),
                }),
            ),
        };
    }
    match value {
        Value::Null => typed("Null", Json::Null),
        Value::Bool(b) => typed("Boolean", Json::Bool(*b)),
        Value::Int64(i) => match format {
            Format::Plain => Json::from(*i),
            Format::Typed => typed("Integer", Json::String(i.to_string())),
        },
        Value::Float64(f) => match format {
            Format::Plain => serde_json::Number::from_f64(*f).map_or(Json::Null, Json::Number),
            Format::Typed => typed("Float", Json::String(f.to_string())),
        },
        Value::String(s) => typed("String", Json::String(s.to_string())),
        Value::Bytes(b) => typed(
            "Base64",
            Json::String(base64::engine::general_purpose::STANDARD.encode(b)),
        ),
        Value::Date(d) => typed("Date", Json::String(d.to_string())),
        Value::Time(t) => typed("Time", Json::String(t.to_string())),
        Value::Timestamp(t) => typed("OffsetDateTime", Json::String(t.to_string())),
        Value::ZonedDatetime(t) => typed("OffsetDateTime", Json::String(t.to_string())),
        Value::Duration(d) => typed("Duration", Json::String(d.to_string())),
        Value::List(items) => typed(
            "List",
            Json::Array(items.iter().map(|v| to_json(v, format)).collect()),
        ),
        Value::Vector(items) => typed(
            "List",
            Json::Array(
                items
                    .iter()
                    .map(|f| to_json(&Value::Float64(f64::from(*f)), format))
                    .collect(),
            ),
        ),
        Value::Map(map) => typed(
            "Map",
            Json::Object(
                map.iter()
                    .map(|(k, v)| (k.as_str().to_string(), to_json(v, format)))
                    .collect(),
            ),
        ),
        Value::Path { nodes, edges } => {
            // Neo4j lists a path as node, relationship, node, ….
            let mut items = Vec::new();
            for (i, node) in nodes.iter().enumerate() {
                items.push(to_json(node, format));
                if let Some(edge) = edges.get(i) {
                    items.push(to_json(edge, format));
                }
            }
            typed("Path", Json::Array(items))
        }
        other => typed("String", Json::String(format!("{other:?}"))),
    }
}

/// A JSON parameter as a Grafeo value. Typed-JSON parameters (`$type`/`_value`) are
/// accepted for the scalar types.
pub fn from_json(json: &Json) -> Value {
    match json {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => n
            .as_i64()
            .map(Value::Int64)
            .unwrap_or_else(|| Value::Float64(n.as_f64().unwrap_or(f64::NAN))),
        Json::String(s) => Value::from(s.as_str()),
        Json::Array(items) => Value::List(items.iter().map(from_json).collect::<Vec<_>>().into()),
        Json::Object(map) => from_typed(map).unwrap_or_else(|| {
            Value::Map(std::sync::Arc::new(
                map.iter()
                    .map(|(k, v)| (k.as_str().into(), from_json(v)))
                    .collect(),
            ))
        }),
    }
}

fn from_typed(map: &Map<String, Json>) -> Option<Value> {
    let (Some(Json::String(t)), Some(v), 2) = (map.get("$type"), map.get("_value"), map.len())
    else {
        return None;
    };
    Some(match (t.as_str(), v) {
        ("Null", _) => Value::Null,
        ("Boolean", Json::Bool(b)) => Value::Bool(*b),
        ("Integer", Json::String(s)) => Value::Int64(s.parse().ok()?),
        ("Float", Json::String(s)) => Value::Float64(s.parse().ok()?),
        ("String", Json::String(s)) => Value::from(s.as_str()),
        ("List", Json::Array(items)) => {
            Value::List(items.iter().map(from_json).collect::<Vec<_>>().into())
        }
        (_, Json::String(s)) => Value::from(s.as_str()),
        _ => return None,
    })
}
