//! Addressing an instance the way its graph does: by its key value (with its label where
//! the value is not unique across labels), by its key as the JSON object answers give (the
//! one way to name a key of several properties), by its caption, or by the element id an
//! earlier answer returned. Every look-up goes through an index: element ids are a seek, keys and
//! captions are range-index seeks (the keys' constraints, or the indexes `POST
//! /actions/setup` creates from the profile), and a caption in another case goes through
//! the full-text search index. An ambiguous reference returns its candidates, each with
//! its label, key and caption, so the next call can name one.

use crate::cypher::quote_name;
use crate::graph_error::graph_error;
use crate::search::{self, Candidates};
use crate::session::Graph;
use kg_graph_profile::Profile;
use kg_wit::types::{Error, ErrorCode};
use neo4j_client::{AccessMode, Transport, Value};
use serde_json::{Map, Value as Json, json};

/// Most candidates an ambiguous reference lists.
const MAX_CANDIDATES: usize = 10;
/// Labels one look-up statement may name (one `UNION ALL` part each); a graph with more
/// keyed labels needs `class_name` to reach the rest.
pub const MAX_LOOKUP_LABELS: usize = 100;

/// A resolved instance: matched again in later statements by its element id
/// (`elementId(n) = $id`, a seek).
#[derive(Debug, Clone)]
pub struct Resolved {
    pub element_id: String,
    pub caption: String,
    /// Its profiled label and key, when it has them.
    pub label: Option<String>,
    pub key: Option<Map<String, Json>>,
}

impl Resolved {
    /// `WHERE` condition on `var` (parameter `$id`).
    pub fn condition(var: &str, parameter: &str) -> String {
        format!("elementId({var}) = ${parameter}")
    }

    /// How the answer names the instance: its key (or element id), label and caption.
    pub fn describe(&self) -> Json {
        json!({
            "element_id": self.element_id,
            "label": self.label,
            "key": self.key,
            "caption": self.caption,
        })
    }
}

/// True for a string shaped like a Neo4j 5 element id (`4:<database>:<number>`): only
/// then is it looked up as one, so a key that happens to contain a colon stays a key.
pub fn looks_like_element_id(reference: &str) -> bool {
    let mut parts = reference.split(':');
    let (Some(kind), Some(database), Some(number), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    let digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    digits(kind)
        && digits(number)
        && !database.is_empty()
        && !database.chars().any(char::is_whitespace)
}

/// The values a reference may stand for as a key: the text, and the integer it spells
/// (a graph keyed by numeric ids is addressed with the same string).
fn key_values(reference: &str) -> Json {
    match reference.parse::<i64>() {
        Ok(n) => json!([reference, n]),
        Err(_) => json!([reference]),
    }
}

pub fn resolve<T: Transport>(
    client: &Graph<'_, T>,
    reference: &str,
    class: Option<&str>,
) -> Result<Resolved, Error> {
    let profile = client.profile().map_err(graph_error)?;
    if looks_like_element_id(reference)
        && let Some(found) = by_element_id(client, &profile, reference, class)?
    {
        return Ok(found);
    }
    let exact = by_key_or_caption(client, &profile, reference, class)?;
    decide(client, &profile, reference, class, exact)
}

/// Resolves two references (a path's ends) with their exact key and caption look-ups in
/// one statement, one round trip instead of two; an element id, or a reference with no
/// exact match, takes [`resolve`]'s further steps on its own.
pub fn resolve_pair<T: Transport>(
    client: &Graph<'_, T>,
    (first, first_class): (&str, Option<&str>),
    (second, second_class): (&str, Option<&str>),
) -> Result<(Resolved, Resolved), Error> {
    if looks_like_element_id(first) || looks_like_element_id(second) {
        return Ok((
            resolve(client, first, first_class)?,
            resolve(client, second, second_class)?,
        ));
    }
    let profile = client.profile().map_err(graph_error)?;
    let mut params = Map::new();
    let mut parts = Vec::new();
    for (side, (reference, class)) in [(first, first_class), (second, second_class)]
        .into_iter()
        .enumerate()
    {
        if let Some((text, side_params)) = exact_statement_for(&profile, reference, class, side) {
            parts.push(text);
            params.extend(side_params);
        }
    }
    let mut found: [Vec<Found>; 2] = Default::default();
    if !parts.is_empty() {
        let rows = client
            .run(&parts.join(" UNION ALL "), params, AccessMode::Read)
            .map_err(graph_error)?
            .rows;
        for row in rows {
            let side = match row.get(2).and_then(Value::as_i64) {
                Some(1) => 1,
                _ => 0,
            };
            if let Some((node, by_key)) = exact_row(row) {
                add_found(&mut found[side], &node, by_key);
            }
        }
    }
    let [first_found, second_found] = found;
    Ok((
        decide(client, &profile, first, first_class, first_found)?,
        decide(client, &profile, second, second_class, second_found)?,
    ))
}

/// The instance `reference` names among the nodes its key or caption matched exactly:
/// when none did, those whose caption matches in another case.
fn decide<T: Transport>(
    client: &Graph<'_, T>,
    profile: &Profile,
    reference: &str,
    class: Option<&str>,
    exact: Vec<Found>,
) -> Result<Resolved, Error> {
    let found = match exact.as_slice() {
        // A key object is no caption, in any case.
        [] if key_object(reference).is_some() => exact,
        [] => by_caption_in_any_case(client, profile, reference, class)?,
        _ => exact,
    };
    // A key match wins over caption matches; otherwise the match must be unique.
    let by_key: Vec<&Found> = found.iter().filter(|f| f.by_key).collect();
    match (by_key.as_slice(), found.as_slice()) {
        ([one], _) => Ok(resolved(profile, one)),
        ([], [one]) => Ok(resolved(profile, one)),
        (_, []) => {
            let mut e = Error::new(
                ErrorCode::NotFound,
                match class {
                    Some(class) => format!("no {class} with key or name \"{reference}\""),
                    None => format!("no instance with key or name \"{reference}\""),
                },
            );
            e.detail = Some(
                json!({"hint": "use search_instances to find it; any element_id an answer gave works too"})
                    .to_string(),
            );
            Err(e)
        }
        (several, all) => {
            let listed: Vec<&Found> = if several.is_empty() {
                all.iter().collect()
            } else {
                several.to_vec()
            };
            let candidates: Vec<Json> = listed
                .iter()
                .take(MAX_CANDIDATES)
                .map(|f| resolved(profile, f).describe_with_labels(&f.labels))
                .collect();
            let mut e = Error::new(
                ErrorCode::Conflict,
                format!(
                    "\"{reference}\" names {} instances; say which one: its key with class_name (a candidate's `key` object as it is, for a key of several properties), or its element_id",
                    candidates.len()
                ),
            );
            e.detail = Some(json!({"candidates": candidates}).to_string());
            Err(e)
        }
    }
}

impl Resolved {
    fn describe_with_labels(&self, labels: &[String]) -> Json {
        let mut entry = self.describe();
        entry["labels"] = json!(labels);
        entry
    }
}

/// One node a look-up found.
struct Found {
    element_id: String,
    labels: Vec<String>,
    properties: Map<String, Json>,
    by_key: bool,
}

fn resolved(profile: &Profile, found: &Found) -> Resolved {
    let key = profile.key_of(&found.labels, &found.properties);
    Resolved {
        element_id: found.element_id.clone(),
        caption: crate::neighbors::caption(profile, &found.labels, &found.properties)
            .unwrap_or_else(|| found.element_id.clone()),
        label: key
            .as_ref()
            .map(|(label, _)| label.clone())
            .or_else(|| found.labels.first().cloned()),
        key: key.map(|(_, key)| key),
    }
}

fn found(value: &Value, by_key: bool) -> Option<Found> {
    let Value::Node {
        element_id,
        labels,
        properties,
    } = value
    else {
        return None;
    };
    Some(Found {
        element_id: element_id.clone(),
        labels: labels.clone(),
        properties: crate::neighbors::plain(properties),
        by_key,
    })
}

fn by_element_id<T: Transport>(
    client: &Graph<'_, T>,
    profile: &Profile,
    reference: &str,
    class: Option<&str>,
) -> Result<Option<Resolved>, Error> {
    let mut params = Map::new();
    params.insert("id".into(), json!(reference));
    let result = client
        .run(
            &format!(
                "MATCH (n) WHERE {} RETURN n LIMIT 1",
                Resolved::condition("n", "id")
            ),
            params,
            AccessMode::Read,
        )
        .map_err(graph_error)?;
    Ok(result
        .rows
        .first()
        .and_then(|row| found(row.first()?, true))
        .filter(|f| class.is_none_or(|c| f.labels.iter().any(|l| l == c)))
        .map(|f| resolved(profile, &f)))
}

/// One statement: for each label in reach, its key equal to the reference and its caption
/// equal to it exactly, each a range-index seek (`UNION ALL` of one part per look-up).
fn by_key_or_caption<T: Transport>(
    client: &Graph<'_, T>,
    profile: &Profile,
    reference: &str,
    class: Option<&str>,
) -> Result<Vec<Found>, Error> {
    let mut nodes: Vec<Found> = Vec::new();
    for (node, by_key) in exact_matches(client, profile, reference, class)? {
        add_found(&mut nodes, &node, by_key);
    }
    Ok(nodes)
}

/// Adds an exact match; a node found both by key and by caption counts once, as by key.
fn add_found(nodes: &mut Vec<Found>, node: &Value, by_key: bool) {
    if let Some(f) = found(node, by_key) {
        match nodes.iter_mut().find(|n| n.element_id == f.element_id) {
            Some(seen) => seen.by_key |= f.by_key,
            None => nodes.push(f),
        }
    }
}

/// The nodes whose key or caption is exactly `reference` (each with whether it was its
/// key), one statement of index seeks; search puts them among its candidates too, so an
/// exact match is never lost among many prefix matches.
pub(crate) fn exact_matches<T: Transport>(
    client: &Graph<'_, T>,
    profile: &Profile,
    reference: &str,
    class: Option<&str>,
) -> Result<Vec<(Value, bool)>, Error> {
    let Some((statement, params)) = exact_statement(profile, reference, class) else {
        return Ok(Vec::new());
    };
    let result = client
        .run(&statement, params, AccessMode::Read)
        .map_err(graph_error)?;
    Ok(result.rows.into_iter().filter_map(exact_row).collect())
}

/// The statement of [`exact_matches`] (rows `node, by_key`) and its parameters (`$values`
/// and `$ref`), or None when no label has a key or caption in reach.
pub(crate) fn exact_statement(
    profile: &Profile,
    reference: &str,
    class: Option<&str>,
) -> Option<(String, Map<String, Json>)> {
    exact_statement_with(profile, reference, class, "", "")
}

/// [`exact_statement`] for one of [`resolve_pair`]'s references: its parameters named
/// `$values{side}` and `$ref{side}`, and each row carrying `side` as a third column.
fn exact_statement_for(
    profile: &Profile,
    reference: &str,
    class: Option<&str>,
    side: usize,
) -> Option<(String, Map<String, Json>)> {
    exact_statement_with(
        profile,
        reference,
        class,
        &side.to_string(),
        &format!(", {side} AS side"),
    )
}

fn exact_statement_with(
    profile: &Profile,
    reference: &str,
    class: Option<&str>,
    suffix: &str,
    extra: &str,
) -> Option<(String, Map<String, Json>)> {
    let in_reach = |label: &str| class.is_none_or(|c| c == label);
    if let Some(key) = key_object(reference) {
        return key_object_statement(profile, &key, &in_reach, suffix, extra);
    }
    let mut parts = Vec::new();
    for (label, key) in profile.keyed_labels() {
        if in_reach(label) {
            parts.push(format!(
                "MATCH (n:{}) WHERE n.{} IN $values{suffix} RETURN n AS node, true AS by_key{extra} LIMIT {}",
                quote_name(label),
                quote_name(key),
                MAX_CANDIDATES + 1
            ));
        }
    }
    for (label, entry) in &profile.labels {
        if let Some(caption) = entry.caption.as_deref().filter(|_| in_reach(label)) {
            parts.push(format!(
                "MATCH (n:{}) WHERE n.{} = $ref{suffix} RETURN n AS node, false AS by_key{extra} LIMIT {}",
                quote_name(label),
                quote_name(caption),
                MAX_CANDIDATES + 1
            ));
        }
    }
    parts.truncate(MAX_LOOKUP_LABELS);
    if parts.is_empty() {
        return None;
    }
    let mut params = Map::new();
    params.insert(format!("values{suffix}"), key_values(reference));
    params.insert(format!("ref{suffix}"), json!(reference));
    Some((parts.join(" UNION ALL "), params))
}

/// A reference written as a key object, as answers give keys (`{"id": "PO-0003"}`, or
/// `{"country": "US", "subd": "Illinois", "name": "Springfield"}` for a key of several
/// properties): a JSON object of one or more strings, numbers or booleans. A key of
/// several properties can only be named this way.
pub(crate) fn key_object(reference: &str) -> Option<Map<String, Json>> {
    if !reference.trim_start().starts_with('{') {
        return None;
    }
    let object: Map<String, Json> = serde_json::from_str(reference).ok()?;
    let scalar = |v: &Json| v.is_string() || v.is_number() || v.is_boolean();
    (!object.is_empty() && object.values().all(scalar)).then_some(object)
}

/// Seeks of a key object on every label in reach keyed by exactly its properties (one
/// `UNION ALL` part each, through the key's constraint or index), all rows by key.
fn key_object_statement(
    profile: &Profile,
    key: &Map<String, Json>,
    in_reach: &dyn Fn(&str) -> bool,
    suffix: &str,
    extra: &str,
) -> Option<(String, Map<String, Json>)> {
    let mut params = Map::new();
    let names: Vec<(String, String)> = key
        .iter()
        .enumerate()
        .map(|(i, (property, value))| {
            let name = format!("k{suffix}_{i}");
            params.insert(name.clone(), value.clone());
            (property.clone(), name)
        })
        .collect();
    let parts: Vec<String> = profile
        .labels
        .iter()
        .filter(|(label, entry)| {
            in_reach(label)
                && entry.key.len() == key.len()
                && entry.key.iter().all(|p| key.contains_key(p))
        })
        .take(MAX_LOOKUP_LABELS)
        .map(|(label, _)| {
            let conditions: Vec<String> = names
                .iter()
                .map(|(property, name)| format!("n.{} = ${name}", quote_name(property)))
                .collect();
            format!(
                "MATCH (n:{}) WHERE {} RETURN n AS node, true AS by_key{extra} LIMIT {}",
                quote_name(label),
                conditions.join(" AND "),
                MAX_CANDIDATES + 1
            )
        })
        .collect();
    (!parts.is_empty()).then(|| (parts.join(" UNION ALL "), params))
}

/// A row of [`exact_statement`]: the node and whether its key (not its caption) matched.
pub(crate) fn exact_row(row: Vec<Value>) -> Option<(Value, bool)> {
    let by_key = matches!(row.get(1), Some(Value::Boolean(true)));
    row.into_iter().next().map(|node| (node, by_key))
}

/// A caption written in another case ("acme industrial"): the search index's candidates
/// whose caption equals the reference case-insensitively.
fn by_caption_in_any_case<T: Transport>(
    client: &Graph<'_, T>,
    profile: &Profile,
    reference: &str,
    class: Option<&str>,
) -> Result<Vec<Found>, Error> {
    let lower = reference.to_lowercase();
    let Candidates { nodes, .. } = search::candidates(client, profile, reference, class, 50)?;
    Ok(nodes
        .iter()
        .filter_map(|n| found(n, false))
        .filter(|f| {
            crate::neighbors::caption(profile, &f.labels, &f.properties)
                .is_some_and(|c| c.to_lowercase() == lower)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use kg_graph_profile::{Declared, Profile};

    fn airports_profile() -> Profile {
        let declared = Declared::parse("[labels.City]\ncaption = \"name\"\n").unwrap();
        let mut constraints = std::collections::BTreeMap::new();
        constraints.insert(
            "City".to_string(),
            vec![vec!["country".into(), "subd".into(), "name".into()]],
        );
        constraints.insert("Airport".to_string(), vec![vec!["icao".into()]]);
        Profile::merge(&declared, &constraints)
    }

    #[test]
    fn key_objects_are_json_objects_of_scalars() {
        assert!(key_object(r#"{"id": "PO-0003"}"#).is_some());
        assert!(
            key_object(r#" {"country": "US", "subd": "Illinois", "name": "Springfield"}"#)
                .is_some()
        );
        assert!(key_object(r#"{"id": 7}"#).is_some());
        for not_one in [
            "PO-0003",
            "{}",
            "{not json",
            r#"{"id": ["a"]}"#,
            r#"{"id": {"nested": 1}}"#,
            r#"{"id": null}"#,
            "[1, 2]",
        ] {
            assert!(key_object(not_one).is_none(), "{not_one}");
        }
    }

    #[test]
    fn a_composite_key_object_seeks_the_labels_keyed_by_exactly_its_properties() {
        let profile = airports_profile();
        let (text, params) = exact_statement(
            &profile,
            r#"{"country": "US", "name": "Springfield", "subd": "Illinois"}"#,
            None,
        )
        .unwrap();
        assert!(text.starts_with("MATCH (n:`City`) WHERE "), "{text}");
        assert!(!text.contains("UNION"), "only City has this key: {text}");
        for property in ["`country` = $k_", "`name` = $k_", "`subd` = $k_"] {
            assert!(text.contains(property), "{text}");
        }
        assert_eq!(params.len(), 3);
        // A single-property key object seeks that key; one no label has seeks nothing.
        let (text, _) = exact_statement(&profile, r#"{"icao": "KSPI"}"#, None).unwrap();
        assert!(
            text.starts_with("MATCH (n:`Airport`) WHERE n.`icao` = $k_0"),
            "{text}"
        );
        assert!(exact_statement(&profile, r#"{"country": "US"}"#, None).is_none());
        assert!(
            exact_statement(&profile, r#"{"icao": "KSPI"}"#, Some("City")).is_none(),
            "out of the class's reach"
        );
    }

    #[test]
    fn only_element_id_shapes_are_looked_up_as_element_ids() {
        assert!(looks_like_element_id("4:devgraph:17"));
        assert!(looks_like_element_id(
            "4:1b7e3f5c-8a1d-4d7e-9e8f-0c2d3e4f5a6b:1234"
        ));
        for key in [
            "SUP-001",
            "class:Supplier",
            "4:x",
            "4::1",
            "a:b:c",
            "4:db:1:2",
            "4:d b:1",
        ] {
            assert!(!looks_like_element_id(key), "{key}");
        }
    }

    #[test]
    fn a_numeric_reference_is_also_tried_as_an_integer_key() {
        assert_eq!(key_values("42"), json!(["42", 42]));
        assert_eq!(key_values("SUP-001"), json!(["SUP-001"]));
    }
}
