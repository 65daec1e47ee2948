//! Result values in both Query API formats: plain JSON (`application/json`) and typed
//! JSON (`application/vnd.neo4j.query`), decoded into one [`Value`].

use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Boolean(bool),
    Integer(i64),
    Float(f64),
    String(String),
    Bytes(Vec<u8>),
    List(Vec<Value>),
    Map(BTreeMap<String, Value>),
    Node {
        element_id: String,
        labels: Vec<String>,
        properties: BTreeMap<String, Value>,
    },
    Relationship {
        element_id: String,
        start_node_element_id: String,
        end_node_element_id: String,
        rel_type: String,
        properties: BTreeMap<String, Value>,
    },
    /// Neo4j lists a path's elements alternately: node, relationship, node, ….
    Path {
        nodes: Vec<Value>,
        relationships: Vec<Value>,
    },
    /// Date, Time, LocalTime, DateTime, OffsetDateTime, ZonedDateTime, LocalDateTime,
    /// Duration: kept as the ISO 8601 text Neo4j sends, with its type name.
    Temporal {
        type_name: String,
        iso: String,
    },
    /// `SRID=4326;POINT (x y)` as sent.
    Point(String),
    /// A `$type` this client does not know, kept raw.
    Unknown {
        type_name: String,
        raw: Json,
    },
}

impl Value {
    /// Compact JSON for APIs and LLMs: scalars as JSON scalars, temporal values as
    /// strings, graph elements as objects with `element_id`, `labels`/`type` and properties.
    pub fn to_plain_json(&self) -> Json {
        let props = |p: &BTreeMap<String, Value>| -> Json {
            Json::Object(
                p.iter()
                    .map(|(k, v)| (k.clone(), v.to_plain_json()))
                    .collect(),
            )
        };
        match self {
            Value::Null => Json::Null,
            Value::Boolean(b) => Json::Bool(*b),
            Value::Integer(i) => Json::from(*i),
            Value::Float(f) => serde_json::Number::from_f64(*f).map_or(Json::Null, Json::Number),
            Value::String(s) => Json::String(s.clone()),
            Value::Bytes(b) => {
                use base64::Engine;
                Json::String(base64::engine::general_purpose::STANDARD.encode(b))
            }
            Value::List(items) => Json::Array(items.iter().map(Value::to_plain_json).collect()),
            Value::Map(m) => props(m),
            Value::Node {
                element_id,
                labels,
                properties,
            } => serde_json::json!({
                "element_id": element_id, "labels": labels, "properties": props(properties),
            }),
            Value::Relationship {
                element_id,
                start_node_element_id,
                end_node_element_id,
                rel_type,
                properties,
            } => {
                serde_json::json!({
                    "element_id": element_id, "type": rel_type,
                    "start": start_node_element_id, "end": end_node_element_id,
                    "properties": props(properties),
                })
            }
            Value::Path {
                nodes,
                relationships,
            } => serde_json::json!({
                "nodes": nodes.iter().map(Value::to_plain_json).collect::<Vec<_>>(),
                "relationships": relationships.iter().map(Value::to_plain_json).collect::<Vec<_>>(),
            }),
            Value::Temporal { iso, .. } | Value::Point(iso) => Json::String(iso.clone()),
            Value::Unknown { raw, .. } => raw.clone(),
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Integer(i) => Some(*i),
            Value::Float(f) if f.fract() == 0.0 => Some(*f as i64),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }
}

/// Decodes a plain-JSON value. Graph elements are recognised by their documented keys.
pub fn decode_plain(json: &Json) -> Value {
    match json {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Boolean(*b),
        Json::Number(n) => n
            .as_i64()
            .map(Value::Integer)
            .unwrap_or_else(|| Value::Float(n.as_f64().unwrap_or(f64::NAN))),
        Json::String(s) => Value::String(s.clone()),
        Json::Array(items) => {
            let values: Vec<Value> = items.iter().map(decode_plain).collect();
            if is_path(&values) {
                split_path(values)
            } else {
                Value::List(values)
            }
        }
        Json::Object(map) => {
            let text = |k: &str| map.get(k).and_then(Json::as_str).map(str::to_string);
            let properties = || plain_map(map.get("properties"));
            if let (Some(element_id), Some(Json::Array(labels)), Some(_)) =
                (text("elementId"), map.get("labels"), map.get("properties"))
            {
                Value::Node {
                    element_id,
                    labels: labels
                        .iter()
                        .filter_map(|l| l.as_str().map(str::to_string))
                        .collect(),
                    properties: properties(),
                }
            } else if let (Some(element_id), Some(start), Some(end), Some(rel_type)) = (
                text("elementId"),
                text("startNodeElementId"),
                text("endNodeElementId"),
                text("type"),
            ) {
                Value::Relationship {
                    element_id,
                    start_node_element_id: start,
                    end_node_element_id: end,
                    rel_type,
                    properties: properties(),
                }
            } else {
                Value::Map(
                    map.iter()
                        .map(|(k, v)| (k.clone(), decode_plain(v)))
                        .collect(),
                )
            }
        }
    }
}

fn plain_map(json: Option<&Json>) -> BTreeMap<String, Value> {
    match json {
        Some(Json::Object(m)) => m
            .iter()
            .map(|(k, v)| (k.clone(), decode_plain(v)))
            .collect(),
        _ => BTreeMap::new(),
    }
}

/// A plain-JSON path is a list alternating node, relationship, node… of length ≥ 3.
pub(crate) fn is_path(values: &[Value]) -> bool {
    values.len() >= 3
        && values.len() % 2 == 1
        && values.iter().enumerate().all(|(i, v)| match v {
            Value::Node { .. } => i % 2 == 0,
            Value::Relationship { .. } => i % 2 == 1,
            _ => false,
        })
}

pub(crate) fn split_path(values: Vec<Value>) -> Value {
    let (mut nodes, mut relationships) = (Vec::new(), Vec::new());
    for (i, v) in values.into_iter().enumerate() {
        if i % 2 == 0 {
            nodes.push(v)
        } else {
            relationships.push(v)
        }
    }
    Value::Path {
        nodes,
        relationships,
    }
}

/// Decodes a typed-JSON value (`{"$type": …, "_value": …}`).
pub fn decode_typed(json: &Json) -> Value {
    let Some((type_name, raw)) = json
        .as_object()
        .and_then(|o| Some((o.get("$type")?.as_str()?, o.get("_value")?)))
    else {
        // Not wrapped: fall back to the plain reading rather than failing the row.
        return decode_plain(json);
    };
    decode_typed_parts(type_name, raw)
}

/// A typed value whose `_value` is already read, for a `$type` that is not a container
/// (`value_de.rs` streams those): the text types take `raw`'s string without copying it.
pub(crate) fn decode_typed_scalar(type_name: &str, raw: Json) -> Value {
    match (type_name, raw) {
        ("String", Json::String(s)) => Value::String(s),
        ("Point", Json::String(s)) => Value::Point(s),
        (t, Json::String(iso)) if is_temporal(t) => Value::Temporal {
            type_name: type_name.to_string(),
            iso,
        },
        (_, raw) => decode_typed_parts(type_name, &raw),
    }
}

/// The typed JSON names of temporal values, whose `_value` is ISO text.
fn is_temporal(type_name: &str) -> bool {
    matches!(
        type_name,
        "Date"
            | "Time"
            | "LocalTime"
            | "DateTime"
            | "OffsetDateTime"
            | "ZonedDateTime"
            | "LocalDateTime"
            | "Duration"
    )
}

/// [`decode_typed`] of `{"$type": type_name, "_value": raw}`.
pub(crate) fn decode_typed_parts(type_name: &str, raw: &Json) -> Value {
    let unknown = || Value::Unknown {
        type_name: type_name.to_string(),
        raw: raw.clone(),
    };
    match type_name {
        "Null" => Value::Null,
        "Boolean" => raw.as_bool().map_or_else(unknown, Value::Boolean),
        "Integer" => raw
            .as_str()
            .and_then(|s| s.parse().ok())
            .or_else(|| raw.as_i64())
            .map_or_else(unknown, Value::Integer),
        "Float" => raw
            .as_str()
            .and_then(|s| s.parse().ok())
            .or_else(|| raw.as_f64())
            .map_or_else(unknown, Value::Float),
        "String" => raw
            .as_str()
            .map_or_else(unknown, |s| Value::String(s.to_string())),
        "Base64" => {
            use base64::Engine;
            raw.as_str()
                .and_then(|s| base64::engine::general_purpose::STANDARD.decode(s).ok())
                .map_or_else(unknown, Value::Bytes)
        }
        "List" => raw.as_array().map_or_else(unknown, |a| {
            Value::List(a.iter().map(decode_typed).collect())
        }),
        "Map" => raw
            .as_object()
            .map_or_else(unknown, |m| Value::Map(typed_map(m))),
        t if is_temporal(t) => raw.as_str().map_or_else(unknown, |s| Value::Temporal {
            type_name: type_name.to_string(),
            iso: s.to_string(),
        }),
        "Point" => raw
            .as_str()
            .map_or_else(unknown, |s| Value::Point(s.to_string())),
        "Node" => {
            let Some(o) = raw.as_object() else {
                return unknown();
            };
            Value::Node {
                element_id: o
                    .get("_element_id")
                    .and_then(Json::as_str)
                    .unwrap_or_default()
                    .to_string(),
                labels: o
                    .get("_labels")
                    .and_then(Json::as_array)
                    .map(|l| {
                        l.iter()
                            .filter_map(|x| x.as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default(),
                properties: o
                    .get("_properties")
                    .and_then(Json::as_object)
                    .map(typed_map)
                    .unwrap_or_default(),
            }
        }
        "Relationship" => {
            let Some(o) = raw.as_object() else {
                return unknown();
            };
            let text = |k: &str| {
                o.get(k)
                    .and_then(Json::as_str)
                    .unwrap_or_default()
                    .to_string()
            };
            Value::Relationship {
                element_id: text("_element_id"),
                start_node_element_id: text("_start_node_element_id"),
                end_node_element_id: text("_end_node_element_id"),
                rel_type: text("_type"),
                properties: o
                    .get("_properties")
                    .and_then(Json::as_object)
                    .map(typed_map)
                    .unwrap_or_default(),
            }
        }
        "Path" => raw.as_array().map_or_else(unknown, |a| {
            split_path(a.iter().map(decode_typed).collect())
        }),
        _ => unknown(),
    }
}

fn typed_map(m: &Map<String, Json>) -> BTreeMap<String, Value> {
    m.iter()
        .map(|(k, v)| (k.clone(), decode_typed(v)))
        .collect()
}
