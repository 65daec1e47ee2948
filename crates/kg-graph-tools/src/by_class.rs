//! `get_instances_by_class`: instances of one class, filtered by property conditions, paged.

use crate::args;
use crate::catalog::ToolOutput;
use crate::cypher::quote_name;
use crate::graph_error::graph_error;
use crate::neighbors::{caption, plain};
use crate::schema::{require_label_unless_found, require_odd_label_first};
use crate::session::Graph;
use kg_wit::types::Error;
use neo4j_client::{AccessMode, Transport, Value};
use serde_json::{Map, Value as Json, json};

pub const NAME: &str = "get_instances_by_class";
const OPERATORS: [&str; 8] = [
    "eq",
    "ne",
    "lt",
    "lte",
    "gt",
    "gte",
    "contains",
    "starts_with",
];
const MAX_FILTERS: usize = 10;

pub fn spec() -> (&'static str, &'static str, Json) {
    (
        NAME,
        "List instances of one class (label), optionally filtered by property conditions, in key order, a page at a time: an answer cut at `limit` gives `next`, which the next call passes as `after`.",
        json!({
            "type": "object",
            "properties": {
                "class_name": {"type": "string", "description": "The class (label), e.g. \"PurchaseOrder\"."},
                "filters": {
                    "type": "array",
                    "maxItems": MAX_FILTERS,
                    "items": {
                        "type": "object",
                        "properties": {
                            "property": {"type": "string", "minLength": 1, "maxLength": 100, "pattern": "\\S"},
                            "op": {"type": "string", "enum": OPERATORS, "default": "eq"},
                            "value": {"type": ["string", "number", "boolean"], "maxLength": args::MAX_STRING_CHARS, "description": "A string, number or boolean."}
                        },
                        "required": ["property", "value"],
                        "if": {"properties": {"op": {"enum": ["contains", "starts_with"]}}, "required": ["op"]},
                        "then": {"properties": {"value": {"type": "string"}}},
                        "additionalProperties": false
                    },
                    "description": "All must hold, e.g. [{\"property\": \"status\", \"value\": \"approved\"}, {\"property\": \"amount\", \"op\": \"gt\", \"value\": 5000}]."
                },
                "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 25},
                "after": {"type": ["string", "integer", "null"], "maxLength": args::MAX_STRING_CHARS, "description": "The `next` of the previous page: this page starts after it."}
            },
            "required": ["class_name"],
            "additionalProperties": false
        }),
    )
}

/// One checked filter, rendered with its value as a parameter.
fn condition(index: usize, filter: &Json) -> Result<(String, Json), Error> {
    let Json::Object(f) = filter else {
        return Err(args::invalid(format!("filters[{index}] must be an object")));
    };
    if let Some(unknown) = f
        .keys()
        .find(|k| !["property", "op", "value"].contains(&k.as_str()))
    {
        return Err(args::invalid(format!(
            "filters[{index}]: unknown field `{unknown}`"
        )));
    }
    let property = match f.get("property") {
        Some(Json::String(p)) if !p.trim().is_empty() && p.chars().count() <= 100 => {
            p.trim().to_string()
        }
        _ => {
            return Err(args::invalid(format!(
                "filters[{index}].property must be a property name"
            )));
        }
    };
    let op = match f.get("op") {
        None => "eq",
        Some(Json::String(op)) if OPERATORS.contains(&op.as_str()) => op.as_str(),
        Some(other) => {
            return Err(args::invalid(format!(
                "filters[{index}].op must be one of {}, got {other}",
                OPERATORS.join(", ")
            )));
        }
    };
    let value = match f.get("value") {
        Some(Json::String(s)) if s.chars().count() > args::MAX_STRING_CHARS => {
            return Err(args::invalid(format!(
                "filters[{index}].value is longer than {} characters",
                args::MAX_STRING_CHARS
            )));
        }
        Some(v @ (Json::String(_) | Json::Number(_) | Json::Bool(_))) => v.clone(),
        _ => {
            return Err(args::invalid(format!(
                "filters[{index}].value must be a string, number or boolean"
            )));
        }
    };
    if matches!(op, "contains" | "starts_with") && !value.is_string() {
        return Err(args::invalid(format!(
            "filters[{index}]: `{op}` needs a string value"
        )));
    }
    // Property names cannot be parameters: they are back-tick quoted, never spliced raw.
    let lhs = format!("n.{}", quote_name(&property));
    let rhs = format!("$v{index}");
    let text = match op {
        "eq" => format!("{lhs} = {rhs}"),
        "ne" => format!("{lhs} <> {rhs}"),
        "lt" => format!("{lhs} < {rhs}"),
        "lte" => format!("{lhs} <= {rhs}"),
        "gt" => format!("{lhs} > {rhs}"),
        "gte" => format!("{lhs} >= {rhs}"),
        // Case-insensitive on strings; CASE keeps toLower away from non-strings.
        "contains" => format!(
            "CASE WHEN {lhs} STARTS WITH '' THEN toLower({lhs}) END CONTAINS toLower({rhs})"
        ),
        _ => format!(
            "CASE WHEN {lhs} STARTS WITH '' THEN toLower({lhs}) END STARTS WITH toLower({rhs})"
        ),
    };
    Ok((text, value))
}

pub fn run<T: Transport>(client: &Graph<'_, T>, arguments: &str) -> Result<ToolOutput, Error> {
    let args = args::object(
        NAME,
        arguments,
        &["class_name", "filters", "limit", "after"],
    )?;
    let class = args::optional_string(&args, "class_name")?
        .ok_or_else(|| args::invalid("`class_name` is required"))?;
    let limit = args::optional_integer(&args, "limit", 25, 1, 100)?;
    let after = match args.get("after") {
        None | Some(Json::Null) => None,
        Some(Json::String(s)) if s.chars().count() > args::MAX_STRING_CHARS => {
            return Err(args::invalid(format!(
                "`after` is longer than {} characters",
                args::MAX_STRING_CHARS
            )));
        }
        Some(v @ Json::String(_)) => Some(v.clone()),
        Some(Json::Number(n)) if n.is_i64() => Some(Json::Number(n.clone())),
        Some(other) => {
            return Err(args::invalid(format!(
                "`after` must be the `next` of a previous answer (a string or an integer), got {other}"
            )));
        }
    };
    let filters = match args.get("filters") {
        None | Some(Json::Null) => Vec::new(),
        Some(Json::Array(filters)) if filters.len() <= MAX_FILTERS => filters.clone(),
        Some(Json::Array(_)) => {
            return Err(args::invalid(format!("at most {MAX_FILTERS} filters")));
        }
        Some(other) => {
            return Err(args::invalid(format!(
                "`filters` must be an array, got {other}"
            )));
        }
    };
    let mut conditions = Vec::new();
    let mut params = Map::new();
    let view = client.view();
    for (index, filter) in filters.iter().enumerate() {
        // A filter on a property the audience may not see would answer whether its value
        // matches: refused, naming the property only.
        if let Some(property) = filter.get("property").and_then(Json::as_str)
            && !view.node_property_visible(&[class.as_str()], property.trim())
        {
            return Err(args::invalid(format!(
                "filters[{index}]: property `{}` of `{class}` is not available",
                property.trim()
            )));
        }
        let (text, value) = condition(index, filter)?;
        conditions.push(text);
        params.insert(format!("v{index}"), value);
    }

    require_odd_label_first(client, &class)?;
    let profile = client.profile_for(&class).map_err(graph_error)?;
    // Pages follow the label's key, so each is a range read of its index from the cursor
    // on, in index order, never a sort of the whole label; a label without a key is paged
    // by element id (a scan of that label, not of the graph).
    let key = profile.label(&class).and_then(|l| l.single_key());
    let order = match key {
        Some(key) => format!("n.{}", quote_name(key)),
        None => "elementId(n)".to_string(),
    };
    match &after {
        Some(after) => {
            conditions.push(format!("{order} > $after"));
            params.insert("after".into(), after.clone());
        }
        None if key.is_some() => conditions.push(format!("{order} IS NOT NULL")),
        None => {}
    }
    let filter_clause = if conditions.is_empty() {
        String::new()
    } else {
        format!("WHERE {} ", conditions.join(" AND "))
    };
    let statement = format!(
        "MATCH (n:{}) {filter_clause}RETURN n ORDER BY {order} LIMIT $limit",
        quote_name(&class)
    );
    params.insert("limit".into(), json!(limit + 1));
    let result = client
        .run(&statement, params, AccessMode::Read)
        .map_err(graph_error)?;
    require_label_unless_found(client, &class, !result.rows.is_empty())?;
    let truncated = result.rows.len() as i64 > limit;
    let mut next = Json::Null;
    let instances: Vec<Json> = result
        .rows
        .iter()
        .take(limit as usize)
        .filter_map(|row| match row.first() {
            Some(Value::Node {
                element_id,
                labels,
                properties,
            }) => {
                let properties = plain(properties);
                next = match key {
                    Some(key) => properties.get(key).cloned().unwrap_or(Json::Null),
                    None => json!(element_id),
                };
                Some(json!({
                    "element_id": element_id,
                    "key": profile.key_of(labels, &properties).map(|(_, key)| key),
                    "caption": caption(&profile, labels, &properties),
                    "properties": properties,
                }))
            }
            _ => None,
        })
        .collect();
    if !truncated {
        next = Json::Null;
    }
    Ok(ToolOutput {
        summary: format!(
            "{} {class} instance{}{}{}",
            instances.len(),
            if instances.len() == 1 { "" } else { "s" },
            if filters.is_empty() {
                String::new()
            } else {
                format!(" matching {} filter(s)", filters.len())
            },
            if truncated {
                format!("; more after {next} (pass it as `after`)")
            } else {
                String::new()
            }
        ),
        data: json!({"class": class, "instances": instances, "next": next}),
        graph: None,
        truncated,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_become_parameterised_conditions_with_quoted_names() {
        let (text, value) =
            condition(0, &json!({"property": "status", "value": "approved"})).unwrap();
        assert_eq!(
            (text.as_str(), value),
            ("n.`status` = $v0", json!("approved"))
        );
        let (text, _) =
            condition(3, &json!({"property": "amount", "op": "gte", "value": 10})).unwrap();
        assert_eq!(text, "n.`amount` >= $v3");
        let (text, _) = condition(
            1,
            &json!({"property": "a`b) DETACH DELETE n //", "value": 1}),
        )
        .unwrap();
        assert_eq!(text, "n.`a``b) DETACH DELETE n //` = $v1");
    }

    #[test]
    fn bad_filters_are_named() {
        for (filter, expected) in [
            (json!("x"), "filters[0] must be an object"),
            (json!({"property": "", "value": 1}), "property"),
            (
                json!({"property": "a", "op": "like", "value": 1}),
                "op must be one of",
            ),
            (json!({"property": "a", "value": [1]}), "value must be"),
            (
                json!({"property": "a", "op": "contains", "value": 1}),
                "needs a string",
            ),
            (
                json!({"property": "a", "value": 1, "x": 2}),
                "unknown field `x`",
            ),
        ] {
            let e = condition(0, &filter).unwrap_err();
            assert!(e.message.contains(expected), "{filter}: {}", e.message);
        }
    }
}
