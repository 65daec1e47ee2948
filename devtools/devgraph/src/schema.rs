//! Neo4j's schema procedures, which Grafeo does not have (issue #14), with Neo4j's
//! columns:
//! - `db.schema.visualization()` → `nodes` (one virtual node per label, with `name`,
//!   `indexes`, `constraints`), `relationships` (one virtual relationship per
//!   (label, type, label) seen in the graph);
//! - `db.schema.nodeTypeProperties()` → `nodeType` (`:`A`:`B``), `nodeLabels`,
//!   `propertyName`, `propertyTypes` (Neo4j's names: `String`, `Long`, `Double`, …),
//!   `mandatory` (on every node of that label set);
//! - `db.schema.relTypeProperties()` → `relType` (`:`T``), `propertyName`,
//!   `propertyTypes`, `mandatory`.
//!
//! The statement `CALL db.schema.x() [YIELD …] <rest>` becomes `UNWIND $rows AS row WITH
//! row.col AS col, … <rest>` over rows computed here (a standalone call returns every
//! column), so YIELD, WHERE and RETURN after it work as in Neo4j. Virtual nodes and
//! relationships have negative ids, as Neo4j's do.

use crate::errors::{Neo4jError, from_grafeo};
use grafeo::Value;
use grafeo::session::Session;
use serde_json::{Map, Value as Json, json};
use std::collections::{BTreeMap, BTreeSet};

/// The parameter that carries the rows (a name no client uses).
pub const ROWS_PARAMETER: &str = "__devgraph_schema_rows";

/// The statement to run instead, and the rows to bind to [`ROWS_PARAMETER`], when
/// `statement` calls one of the schema procedures.
pub fn rewrite(session: &Session, statement: &str) -> Result<Option<(String, Json)>, Neo4jError> {
    let Some((name, rest)) = called(statement) else {
        return Ok(None);
    };
    let columns: &[&str] = match name.to_ascii_lowercase().as_str() {
        "db.schema.visualization" => &["nodes", "relationships"],
        "db.schema.nodetypeproperties" => &[
            "nodeType",
            "nodeLabels",
            "propertyName",
            "propertyTypes",
            "mandatory",
        ],
        "db.schema.reltypeproperties" => &["relType", "propertyName", "propertyTypes", "mandatory"],
        _ => return Ok(None),
    };
    let rest = no_arguments(&name, rest)?;
    let rows = match columns[0] {
        "nodes" => visualization(session)?,
        "nodeType" => node_type_properties(session)?,
        _ => rel_type_properties(session)?,
    };
    Ok(Some((rows_statement(&name, columns, rest)?, rows)))
}

/// `CALL a.b.c…`: the procedure's name and what follows it.
pub fn called(statement: &str) -> Option<(String, &str)> {
    let rest = strip_word(statement.trim_start(), "CALL")?;
    let (name, rest) = dotted_name(rest);
    Some((name, rest))
}

/// The text after `name()` (which must take no arguments).
pub fn no_arguments<'a>(name: &str, rest: &'a str) -> Result<&'a str, Neo4jError> {
    let rest = rest.trim_start();
    let Some(rest) = rest.strip_prefix('(').map(str::trim_start) else {
        return Err(syntax(format!("`{name}` must be called with `()`")));
    };
    let Some(rest) = rest.strip_prefix(')') else {
        return Err(syntax(format!("`{name}` takes no arguments")));
    };
    Ok(rest.trim())
}

/// The statement that answers procedure `name` (or a `SHOW` command) from rows bound to
/// [`ROWS_PARAMETER`]: `UNWIND $rows AS row WITH row.col AS col, … <rest>`, so `YIELD`,
/// `WHERE` and `RETURN` after it work as in Neo4j; alone, it returns every column.
pub fn rows_statement(name: &str, columns: &[&str], rest: &str) -> Result<String, Neo4jError> {
    let row = |c: &str| format!("__devgraph_row.`{c}` AS `{c}`");
    let unwind = format!("UNWIND ${ROWS_PARAMETER} AS __devgraph_row");
    let all = || {
        columns
            .iter()
            .map(|c| row(c))
            .collect::<Vec<_>>()
            .join(", ")
    };
    Ok(match strip_word(rest, "YIELD") {
        Some(yielded) => {
            // `YIELD a, b AS c [WHERE …] <rest>`: the yielded names, then the rest.
            let (items, after) = yield_items(yielded);
            let mut projections = Vec::new();
            for (column, alias) in &items {
                if column == "*" {
                    projections.extend(columns.iter().map(|c| row(c)));
                    continue;
                }
                if !columns.contains(&column.as_str()) {
                    return Err(syntax(format!(
                        "`{name}` yields no `{column}` (it yields {})",
                        columns.join(", ")
                    )));
                }
                projections.push(format!("__devgraph_row.`{column}` AS `{alias}`"));
            }
            let names: Vec<String> = items
                .iter()
                .flat_map(|(c, a)| {
                    if c == "*" {
                        columns.iter().map(|c| format!("`{c}`")).collect()
                    } else {
                        vec![format!("`{a}`")]
                    }
                })
                .collect();
            if after.is_empty() || after == ";" {
                // A standalone `CALL p() YIELD a`: the yielded columns.
                format!("{unwind} RETURN {}", projections.join(", "))
            } else if strip_word(after, "WHERE").is_some() && !contains_word(after, "RETURN") {
                format!(
                    "{unwind} WITH {} {after} RETURN {}",
                    projections.join(", "),
                    names.join(", ")
                )
            } else {
                format!("{unwind} WITH {} {after}", projections.join(", "))
            }
        }
        None if rest.is_empty() || rest == ";" => format!("{unwind} RETURN {}", all()),
        None => format!("{unwind} WITH {} {rest}", all()),
    })
}

fn contains_word(text: &str, word: &str) -> bool {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|w| w.eq_ignore_ascii_case(word))
}

pub fn syntax(message: String) -> Neo4jError {
    Neo4jError::new(400, "Neo.ClientError.Statement.SyntaxError", message)
}

pub fn strip_word<'a>(text: &'a str, word: &str) -> Option<&'a str> {
    let head = text.get(..word.len())?;
    let rest = &text[word.len()..];
    (head.eq_ignore_ascii_case(word) && rest.starts_with(char::is_whitespace))
        .then(|| rest.trim_start())
}

/// `a.b.c` (back-ticks allowed) at the start of `text`, and what follows.
fn dotted_name(text: &str) -> (String, &str) {
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '`'))
        .unwrap_or(text.len());
    (text[..end].replace('`', ""), &text[end..])
}

/// `a, b AS c` up to the first clause word after it: (column, alias) pairs and the rest.
pub fn yield_items(text: &str) -> (Vec<(String, String)>, &str) {
    let mut items = Vec::new();
    let mut rest = text;
    loop {
        rest = rest.trim_start();
        if let Some(after) = rest.strip_prefix('*') {
            items.push(("*".to_string(), "*".to_string()));
            rest = after;
        } else {
            let (column, after) = dotted_name(rest);
            if column.is_empty() {
                break;
            }
            rest = after.trim_start();
            let mut alias = column.clone();
            if let Some(after) = strip_word(rest, "AS") {
                let (name, after) = dotted_name(after);
                alias = name;
                rest = after;
            }
            items.push((column, alias));
        }
        match rest.trim_start().strip_prefix(',') {
            Some(after) => rest = after,
            None => break,
        }
    }
    (items, rest.trim_start())
}

fn query(session: &Session, statement: &str) -> Result<Vec<Vec<Value>>, Neo4jError> {
    Ok(session
        .execute_cypher(statement)
        .map_err(|e| from_grafeo(&e))?
        .rows()
        .to_vec())
}

fn strings(value: &Value) -> Vec<String> {
    match value {
        Value::List(items) => items
            .iter()
            .filter_map(|v| match v {
                Value::String(s) => Some(s.to_string()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Neo4j's name for a property value's type (`db.schema.*Properties`).
fn type_name(value: &Value) -> String {
    let scalar = |v: &Value| -> &'static str {
        match v {
            Value::Bool(_) => "Boolean",
            Value::Int64(_) => "Long",
            Value::Float64(_) => "Double",
            Value::String(_) => "String",
            Value::Date(_) => "Date",
            Value::Time(_) => "Time",
            Value::Timestamp(_) | Value::ZonedDatetime(_) => "DateTime",
            Value::Duration(_) => "Duration",
            Value::Bytes(_) => "ByteArray",
            _ => "Any",
        }
    };
    match value {
        Value::List(items) => format!("{}Array", items.first().map_or("String", scalar)),
        Value::Vector(_) => "FloatArray".to_string(),
        other => scalar(other).to_string(),
    }
}

fn quoted_type(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!(":`{}`", n.replace('`', "``")))
        .collect()
}

/// (types seen, how many carry it) per property, and how many elements there were.
type Observed = (BTreeMap<String, (BTreeSet<String>, usize)>, usize);

fn observe(into: &mut Observed, properties: &Value) {
    into.1 += 1;
    if let Value::Map(map) = properties {
        for (key, value) in map.iter() {
            if key.as_str().starts_with('_') {
                continue;
            }
            let entry = into.0.entry(key.as_str().to_string()).or_default();
            entry.0.insert(type_name(value));
            entry.1 += 1;
        }
    }
}

fn property_rows(
    head: impl Fn() -> Map<String, Json>,
    (properties, total): &Observed,
) -> Vec<Json> {
    if properties.is_empty() {
        let mut row = head();
        row.insert("propertyName".into(), Json::Null);
        row.insert("propertyTypes".into(), Json::Null);
        row.insert("mandatory".into(), json!(false));
        return vec![Json::Object(row)];
    }
    properties
        .iter()
        .map(|(name, (types, seen))| {
            let mut row = head();
            row.insert("propertyName".into(), json!(name));
            row.insert("propertyTypes".into(), json!(types));
            row.insert("mandatory".into(), json!(seen == total));
            Json::Object(row)
        })
        .collect()
}

fn node_type_properties(session: &Session) -> Result<Json, Neo4jError> {
    let mut by_labels: BTreeMap<Vec<String>, Observed> = BTreeMap::new();
    for row in query(session, "MATCH (n) RETURN labels(n), properties(n)")? {
        let mut labels = row.first().map(strings).unwrap_or_default();
        labels.sort();
        let observed = by_labels.entry(labels).or_default();
        observe(observed, row.get(1).unwrap_or(&Value::Null));
    }
    let mut rows = Vec::new();
    for (labels, observed) in &by_labels {
        let head = || {
            let mut m = Map::new();
            m.insert("nodeType".into(), json!(quoted_type(labels)));
            m.insert("nodeLabels".into(), json!(labels));
            m
        };
        rows.extend(property_rows(head, observed));
    }
    Ok(Json::Array(rows))
}

fn rel_type_properties(session: &Session) -> Result<Json, Neo4jError> {
    let mut by_type: BTreeMap<String, Observed> = BTreeMap::new();
    for row in query(session, "MATCH ()-[r]->() RETURN type(r), properties(r)")? {
        let rel_type = match row.first() {
            Some(Value::String(s)) => s.to_string(),
            _ => continue,
        };
        observe(
            by_type.entry(rel_type).or_default(),
            row.get(1).unwrap_or(&Value::Null),
        );
    }
    let mut rows = Vec::new();
    for (rel_type, observed) in &by_type {
        let head = || {
            let mut m = Map::new();
            m.insert(
                "relType".into(),
                json!(quoted_type(std::slice::from_ref(rel_type))),
            );
            m
        };
        rows.extend(property_rows(head, observed));
    }
    Ok(Json::Array(rows))
}

fn visualization(session: &Session) -> Result<Json, Neo4jError> {
    let mut labels: BTreeSet<String> = BTreeSet::new();
    for row in query(session, "MATCH (n) UNWIND labels(n) AS l RETURN DISTINCT l")? {
        if let Some(Value::String(s)) = row.first() {
            labels.insert(s.to_string());
        }
    }
    let ids: BTreeMap<&String, i64> = labels
        .iter()
        .enumerate()
        .map(|(i, l)| (l, -(i as i64) - 1))
        .collect();
    let nodes: Vec<Json> = labels
        .iter()
        .map(
            |l| json!({"_id": ids[l], "_labels": [l], "name": l, "indexes": [], "constraints": []}),
        )
        .collect();
    let mut triples: BTreeSet<(String, String, String)> = BTreeSet::new();
    for row in query(
        session,
        "MATCH (a)-[r]->(b) RETURN DISTINCT labels(a), type(r), labels(b)",
    )? {
        let (Some(from), Some(Value::String(t)), Some(to)) = (row.first(), row.get(1), row.get(2))
        else {
            continue;
        };
        for a in strings(from) {
            for b in strings(to) {
                triples.insert((a.clone(), t.to_string(), b));
            }
        }
    }
    let relationships: Vec<Json> = triples
        .iter()
        .enumerate()
        .filter_map(|(i, (a, t, b))| {
            Some(json!({"_id": -(i as i64) - 1, "_type": t, "_source": ids.get(a)?, "_target": ids.get(b)?}))
        })
        .collect();
    Ok(json!([{"nodes": nodes, "relationships": relationships}]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yield_items_and_names() {
        assert_eq!(
            yield_items("a, b AS c WHERE c > 1 RETURN a"),
            (
                vec![("a".into(), "a".into()), ("b".into(), "c".into())],
                "WHERE c > 1 RETURN a"
            )
        );
        assert_eq!(
            dotted_name("db.schema.visualization()"),
            ("db.schema.visualization".into(), "()")
        );
        assert_eq!(strip_word("call  x", "CALL"), Some("x"));
        assert_eq!(strip_word("CALLx", "CALL"), None);
    }
}
