//! Grafeo values to the Query API's JSON shapes (plain and typed) and JSON parameters to
//! Grafeo values. Grafeo returns nodes as maps with `_id`/`_labels` and relationships as
//! maps with `_id`/`_type`/`_source`/`_target`; Neo4j clients expect element objects.

use base64::Engine;
use grafeo::Value;
use serde_json::{Value as Json, json};

/// Neo4j-shaped element ids: `4:` for nodes and `5:` for relationships, as Neo4j 5 does.
pub fn node_element_id(id: i64) -> String {
    format!("4:devgraph:{id}")
}

pub fn relationship_element_id(id: i64) -> String {
    format!("5:devgraph:{id}")
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
        // Neo4j's TIME carries an offset, its LOCAL TIME none; Grafeo's Time is either.
        Value::Time(t) if t.offset_seconds().is_some() => {
            typed("Time", Json::String(t.to_string()))
        }
        Value::Time(t) => typed("LocalTime", Json::String(t.to_string())),
        // Grafeo's Timestamp is its LOCAL DATETIME (what `localdatetime()` returns);
        // `datetime()` returns a ZonedDatetime, which has a fixed offset only.
        Value::Timestamp(t) => typed("LocalDateTime", Json::String(t.to_local_text())),
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

/// A plain-JSON parameter as a Grafeo value: objects are maps, as Neo4j reads
/// `application/json` bodies (a `{"$type": …}` object is a map there too).
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
        Json::Object(map) => Value::Map(std::sync::Arc::new(
            map.iter()
                .map(|(k, v)| (k.as_str().into(), from_json(v)))
                .collect(),
        )),
    }
}

/// Turns a temporal text into a Grafeo value with Grafeo's own parser (the Cypher
/// function named), `None` when the text is not one.
pub type Temporal<'a> = &'a dyn Fn(&str, &str) -> Option<Value>;

/// A parameter of a request sent as typed JSON (`Content-Type:
/// application/vnd.neo4j.query…`): every `{"$type": T, "_value": v}` is decoded as the
/// Query API documents; a malformed one is the client's error. Plain JSON values are
/// taken as they are.
pub fn from_typed_json(json: &Json, temporal: Temporal<'_>) -> Result<Value, String> {
    let Json::Object(map) = json else {
        return match json {
            Json::Array(items) => Ok(Value::List(
                items
                    .iter()
                    .map(|v| from_typed_json(v, temporal))
                    .collect::<Result<Vec<_>, _>>()?
                    .into(),
            )),
            other => Ok(from_json(other)),
        };
    };
    let Some(t) = map.get("$type") else {
        return Ok(Value::Map(std::sync::Arc::new(
            map.iter()
                .map(|(k, v)| Ok((k.as_str().into(), from_typed_json(v, temporal)?)))
                .collect::<Result<_, String>>()?,
        )));
    };
    let Json::String(t) = t else {
        return Err(format!("`$type` must be a string, not {t}"));
    };
    let Some(v) = map.get("_value") else {
        return Err(format!("the {t} value has no `_value`"));
    };
    if map.len() != 2 {
        return Err(format!(
            "a typed value has exactly `$type` and `_value`, this {t} has more"
        ));
    }
    let bad = || format!("`{v}` is not a valid {t} value");
    let text = || v.as_str().ok_or_else(bad);
    let with = |function: &str, check: &dyn Fn(&str) -> bool| -> Result<Value, String> {
        let s = text()?;
        if !check(s) {
            return Err(bad());
        }
        temporal(function, s).ok_or_else(bad)
    };
    let offset = |s: &str| {
        s.ends_with('Z')
            || s.ends_with('z')
            || s.rfind(['+', '-']).is_some_and(|i| s[..i].contains(':'))
    };
    match t.as_str() {
        "Null" if v.is_null() => Ok(Value::Null),
        "Boolean" => v.as_bool().map(Value::Bool).ok_or_else(bad),
        "Integer" => text()?.parse().map(Value::Int64).map_err(|_| bad()),
        "Float" => match text()? {
            "NaN" => Ok(Value::Float64(f64::NAN)),
            "Infinity" => Ok(Value::Float64(f64::INFINITY)),
            "-Infinity" => Ok(Value::Float64(f64::NEG_INFINITY)),
            s => s.parse().map(Value::Float64).map_err(|_| bad()),
        },
        "String" => text().map(Value::from),
        "Base64" => base64::engine::general_purpose::STANDARD
            .decode(text()?)
            .map(|b| Value::Bytes(b.into()))
            .map_err(|_| bad()),
        "List" => match v {
            Json::Array(items) => Ok(Value::List(
                items
                    .iter()
                    .map(|i| from_typed_json(i, temporal))
                    .collect::<Result<Vec<_>, _>>()?
                    .into(),
            )),
            _ => Err(bad()),
        },
        "Map" => match v {
            Json::Object(entries) => Ok(Value::Map(std::sync::Arc::new(
                entries
                    .iter()
                    .map(|(k, v)| Ok((k.as_str().into(), from_typed_json(v, temporal)?)))
                    .collect::<Result<_, String>>()?,
            ))),
            _ => Err(bad()),
        },
        "Date" => with("date", &|s| !s.contains('T')),
        "Time" => with("time", &|s| offset(s)),
        "LocalTime" => with("localtime", &|s| !offset(s)),
        "LocalDateTime" => with("localdatetime", &|s| s.contains('T') && !offset(s)),
        "OffsetDateTime" | "DateTime" => with("datetime", &|s| s.contains('T') && offset(s)),
        "ZonedDateTime" => {
            // `2024-01-01T21:40:32+01:00[Europe/Paris]`: Grafeo keeps offsets only, so
            // the offset must be there; the zone name is dropped.
            let s = text()?;
            let without_zone = s.split('[').next().unwrap_or(s);
            if !(without_zone.contains('T') && offset(without_zone)) {
                return Err(format!(
                    "{}: devgraph (Grafeo) keeps fixed offsets only, so a ZonedDateTime needs its offset before the zone name",
                    bad()
                ));
            }
            temporal("datetime", without_zone).ok_or_else(bad)
        }
        "Duration" => with("duration", &|s| s.starts_with('P') || s.starts_with("-P")),
        "Point" => Err(format!(
            "devgraph (Grafeo) has no spatial type: the Point `{v}` cannot be a parameter here"
        )),
        "Node" | "Relationship" | "Path" => Err(format!("a {t} cannot be a parameter")),
        _ => Err(format!("unknown `$type` `{t}`")),
    }
}
