//! `describe_class`: one class in full — its description (from the ontology, when there is
//! one), its properties with the value types observed on a sample of instances, its
//! relationships in and out with the class at the other end, its instance count and a few
//! sample instances.
//!
//! `available_actions` is always `null` here: the action catalog belongs to the
//! action-executor component (issue #5) and components cannot call each other, so the
//! dispatcher fills the field in from that catalog when it merges the two answers.

use crate::args;
use crate::catalog::ToolOutput;
use crate::cypher::quote_name;
use crate::graph_error::graph_error;
use crate::neighbors::graph_node;
use crate::schema::require_label;
use crate::session::Graph;
use kg_graph_profile::View;
use kg_wit::types::{Error, GraphData};
use neo4j_client::{AccessMode, Transport, Value};
use serde_json::{Map, Value as Json, json};
use std::collections::BTreeMap;

pub const NAME: &str = "describe_class";
/// Instances whose properties are sampled for names and types.
const PROPERTY_SAMPLE: usize = 20;
/// Relationships sampled per type and direction for the classes at the other end.
const RELATIONSHIP_SAMPLE: usize = 20;
/// Relationship types one answer describes, at most.
const MAX_TYPES: usize = 50;

pub fn spec() -> (&'static str, &'static str, Json) {
    (
        NAME,
        "Describe one class (label): description, properties with their types, relationships in and out with the class at the other end, instance count, sample instances. `available_actions` lists the actions that can run on its instances (filled in by the agent from the action catalog; null when not merged).",
        json!({
            "type": "object",
            "properties": {
                "class_name": {"type": "string", "description": "The class (label), e.g. \"PurchaseOrder\"."},
                "sample_size": {"type": "integer", "minimum": 0, "maximum": 10, "default": 3, "description": "Sample instances to include."}
            },
            "required": ["class_name"],
            "additionalProperties": false
        }),
    )
}

pub fn run<T: Transport>(client: &Graph<'_, T>, arguments: &str) -> Result<ToolOutput, Error> {
    let args = args::object(NAME, arguments, &["class_name", "sample_size"])?;
    let class = args::optional_string(&args, "class_name")?
        .ok_or_else(|| args::invalid("`class_name` is required"))?;
    let sample_size = args::optional_integer(&args, "sample_size", 3, 0, 10)?;
    let known = client.labels(&[&class]).map_err(graph_error)?;
    require_label(&class, &known)?;
    let label = quote_name(&class);
    let read = |statement: &str, params: Map<String, Json>| {
        client
            .run(statement, params, AccessMode::Read)
            .map_err(graph_error)
    };
    let by_name = || {
        let mut p = Map::new();
        p.insert("name".into(), json!(class));
        p
    };

    let has_ontology = known.iter().any(|l| l == "OntologyClass");
    let (description, declared) = if has_ontology {
        let r = read(
            "MATCH (c:OntologyClass) WHERE c.name = $name RETURN c.description, c.properties LIMIT 1",
            by_name(),
        )?;
        let row = r.rows.first();
        let description = row
            .and_then(|r| r.first())
            .and_then(Value::as_str)
            .map(str::to_string);
        let declared: BTreeMap<String, String> = match row.and_then(|r| r.get(1)) {
            Some(Value::List(items)) => items
                .iter()
                .filter_map(Value::as_str)
                .filter_map(|p| p.split_once(':'))
                .map(|(n, t)| (n.to_string(), t.to_string()))
                .collect(),
            _ => BTreeMap::new(),
        };
        (description, declared)
    } else {
        (None, BTreeMap::new())
    };

    // No ontology node says it: the graph profile's description.
    let description = description.or_else(|| {
        client
            .known_profile()
            .label(&class)
            .and_then(|l| l.description.clone())
    });
    // The count, the property sample and the sample instances in one statement.
    let profile = client.profile_for(&class).map_err(graph_error)?;
    let key = profile.label(&class).and_then(|l| l.single_key());
    let view = client.view();
    let hidden: Vec<String> = view
        .hidden_label_properties
        .get(&class)
        .map(|h| h.iter().cloned().collect())
        .unwrap_or_default();
    let (count, observed, sampled) = counted_and_sampled(&read, &label, key, sample_size, &hidden)?;
    let mut properties = properties(&observed, &declared);
    // Names the audience may not see are not listed (their values were never shaped).
    properties.retain(|p| {
        p["name"]
            .as_str()
            .is_some_and(|name| view.node_property_visible(&[class.as_str()], name))
    });
    let types = client.relationship_types(&[]).map_err(graph_error)?;
    // The hidden labels the graph has, whose nodes a relationship count leaves out.
    let hidden_labels = client.hidden_labels_in_graph().map_err(graph_error)?;
    let mut relationships = relationships(&read, &label, &types, &view, &hidden_labels)?;
    if known.iter().any(|l| l == "OntologyRelationship") {
        let r = read(
            "MATCH (r:OntologyRelationship) WHERE r.source = $name OR r.target = $name RETURN r.name, r.source, r.target, r.description LIMIT 200",
            by_name(),
        )?;
        for row in &r.rows {
            let text = |i: usize| row.get(i).and_then(Value::as_str).unwrap_or_default();
            for rel in relationships.iter_mut() {
                let (source, target) = if rel["direction"] == "out" {
                    (
                        class.as_str(),
                        rel["other_class"].as_str().unwrap_or_default(),
                    )
                } else {
                    (
                        rel["other_class"].as_str().unwrap_or_default(),
                        class.as_str(),
                    )
                };
                if rel["type"] == text(0) && source == text(1) && target == text(2) {
                    rel["description"] = json!(text(3));
                }
            }
        }
    }

    let mut samples = Vec::new();
    let mut nodes = Vec::new();
    for value in &sampled {
        if let Some(node) = graph_node(&profile, value) {
            samples.push(json!({
                "element_id": node.id,
                "caption": node.caption,
                "properties": serde_json::from_str::<Json>(&node.properties).unwrap_or(Json::Null),
            }));
            nodes.push(node);
        }
    }
    let summary = format!(
        "{class}: {count} instances, {} properties, {} relationship kinds{}",
        properties.len(),
        relationships.len(),
        description
            .as_deref()
            .map(|d| format!(" — {d}"))
            .unwrap_or_default()
    );
    Ok(ToolOutput {
        data: json!({
            "class": class,
            "description": description,
            "instance_count": count,
            "properties": properties,
            "relationships": relationships,
            "samples": samples,
            "available_actions": Json::Null,
        }),
        summary,
        graph: (!nodes.is_empty()).then(|| GraphData {
            nodes,
            edges: Vec::new(),
        }),
        truncated: false,
    })
}

/// Runs one READ statement.
type Read<'a> = &'a dyn Fn(&str, Map<String, Json>) -> Result<neo4j_client::QueryResult, Error>;

/// The label's count (from the count store), `[key, value]` pairs of the properties of
/// its first [`PROPERTY_SAMPLE`] nodes, and up to `sample_size` instances (in key order
/// where the label has a key: a range read of its index, no sort of the whole label;
/// else the first its scan gives), in one statement: three round trips before. Each part
/// aggregates in its own subquery, so each answers one row even when it finds nothing.
fn counted_and_sampled(
    read: Read,
    label: &str,
    key: Option<&str>,
    sample_size: i64,
    hidden: &[String],
) -> Result<(i64, Vec<Value>, Vec<Value>), Error> {
    let samples = if sample_size > 0 {
        let (filter, order) = match key {
            Some(key) => {
                let key = quote_name(key);
                (
                    format!(" WHERE s.{key} IS NOT NULL"),
                    format!(" ORDER BY s.{key}"),
                )
            }
            None => (String::new(), String::new()),
        };
        format!(
            "CALL () {{ MATCH (s:{label}){filter} WITH s{order} LIMIT $limit RETURN collect(s) AS samples }} "
        )
    } else {
        "WITH count, observed, [] AS samples ".to_string()
    };
    // Properties the audience may not see are not read at all (their values would only
    // give a type, but they need not leave the graph for that).
    let unseen = if hidden.is_empty() {
        ""
    } else {
        " WITH p, key WHERE NOT key IN $hidden"
    };
    let statement = format!(
        "MATCH (n:{label}) WITH count(n) AS count \
         CALL () {{ MATCH (p:{label}) WITH p LIMIT {PROPERTY_SAMPLE} UNWIND keys(p) AS key{unseen} \
         WITH key, p[key] AS value LIMIT 5000 RETURN collect([key, value]) AS observed }} \
         {samples}RETURN count, observed, samples"
    );
    let mut params = Map::new();
    if !hidden.is_empty() {
        params.insert("hidden".into(), json!(hidden));
    }
    params.insert("limit".into(), json!(sample_size));
    let result = read(&statement, params)?;
    let Some(row) = result.rows.into_iter().next() else {
        return Ok((0, Vec::new(), Vec::new()));
    };
    let mut row = row.into_iter();
    let count = row.next().as_ref().and_then(Value::as_i64).unwrap_or(0);
    let list = |value: Option<Value>| match value {
        Some(Value::List(items)) => items,
        _ => Vec::new(),
    };
    let observed = list(row.next());
    let samples = list(row.next());
    Ok((count, observed, samples))
}

/// Property names and the value types seen on a sample of instances (`[key, value]`
/// pairs), with the ontology's declared type where it has one.
fn properties(observed: &[Value], declared: &BTreeMap<String, String>) -> Vec<Json> {
    let mut seen: BTreeMap<String, (usize, Vec<&'static str>)> = BTreeMap::new();
    for pair in observed {
        let Value::List(pair) = pair else { continue };
        let Some(key) = pair.first().and_then(Value::as_str) else {
            continue;
        };
        let entry = seen.entry(key.to_string()).or_default();
        entry.0 += 1;
        let kind = pair.get(1).map_or("null", type_name);
        if !entry.1.contains(&kind) {
            entry.1.push(kind);
        }
    }
    for name in declared.keys() {
        seen.entry(name.clone()).or_default();
    }
    seen.into_iter()
        .map(|(name, (present, types))| {
            json!({
                "name": name,
                "declared_type": declared.get(&name),
                "observed_types": types,
                "present_in_sample": present,
            })
        })
        .collect()
}

/// The class's relationships per direction and type: how many from Neo4j's count store
/// (`(:Label)-[:TYPE]->()` is kept, not counted), and the classes at the other end from a
/// sample of [`RELATIONSHIP_SAMPLE`]. When the sample's other ends all carry the same
/// labels, each of them gets the type's count; otherwise the count per class is unknown
/// (null) and `type_count` gives the type's.
///
/// Under a policy hiding labels the graph has (`hidden_labels`), a count is the count
/// store's less the relationships whose other end is hidden, counted by scanning those
/// ends' relationships of the type (`MATCH (:Label)-[r:T]->(h:H1|H2)`), so a hidden node
/// changes no count and a visible class's count is not turned into a scan.
fn relationships(
    read: Read,
    label: &str,
    types: &[String],
    view: &View,
    hidden_labels: &[String],
) -> Result<Vec<Json>, Error> {
    let hidden_union = hidden_labels
        .iter()
        .map(|l| quote_name(l))
        .collect::<Vec<_>>()
        .join("|");
    let types: Vec<&String> = types.iter().take(MAX_TYPES).collect();
    let mut params = Map::new();
    let mut parts = Vec::new();
    for (i, rel_type) in types.iter().enumerate() {
        params.insert(format!("t{i}"), json!(rel_type));
        let t = quote_name(rel_type);
        for (direction, pattern, to_hidden) in [
            (
                "out",
                format!("(:{label})-[r:{t}]->()"),
                format!("(:{label})-[r:{t}]->(:{hidden_union})"),
            ),
            (
                "in",
                format!("(:{label})<-[r:{t}]-()"),
                format!("(:{label})<-[r:{t}]-(:{hidden_union})"),
            ),
        ] {
            let count = if hidden_labels.is_empty() {
                format!("MATCH {pattern} WITH count(r) AS count")
            } else {
                format!(
                    "MATCH {pattern} WITH count(r) AS all \
                     CALL () {{ MATCH {to_hidden} RETURN count(r) AS hidden }} \
                     WITH all - hidden AS count"
                )
            };
            parts.push(format!(
                "{count} RETURN $t{i} AS type, '{direction}' AS direction, count"
            ));
        }
    }
    if parts.is_empty() {
        return Ok(Vec::new());
    }
    let mut counts = Vec::new();
    for row in read(&parts.join(" UNION ALL "), params.clone())?.rows {
        if let (Some(t), Some(d), Some(c)) = (
            row.first().and_then(Value::as_str),
            row.get(1).and_then(Value::as_str),
            row.get(2).and_then(Value::as_i64),
        ) && c > 0
        {
            counts.push((t.to_string(), d.to_string(), c));
        }
    }
    if counts.is_empty() {
        return Ok(Vec::new());
    }
    // The other ends sampled are visible ones only: a hidden one would make the classes
    // at the other end look mixed.
    let unseen = if hidden_labels.is_empty() {
        String::new()
    } else {
        params.insert(
            kg_graph_profile::policy::HIDDEN_LABELS_PARAMETER.into(),
            json!(hidden_labels),
        );
        format!(
            " WHERE none(l IN labels(m) WHERE l IN ${})",
            kg_graph_profile::policy::HIDDEN_LABELS_PARAMETER
        )
    };
    let mut sample_parts = Vec::new();
    for (t, d, _) in &counts {
        let Some(i) = types.iter().position(|x| *x == t) else {
            continue;
        };
        let pattern = if d == "out" {
            format!("(n:{label})-[:{}]->(m)", quote_name(t))
        } else {
            format!("(n:{label})<-[:{}]-(m)", quote_name(t))
        };
        sample_parts.push(format!(
            "MATCH {pattern}{unseen} WITH m LIMIT {RELATIONSHIP_SAMPLE} \
             RETURN $t{i} AS type, '{d}' AS direction, labels(m) AS others, count(*) AS seen"
        ));
    }
    let mut others: BTreeMap<(String, String), Vec<Vec<String>>> = BTreeMap::new();
    for row in read(&sample_parts.join(" UNION ALL "), params)?.rows {
        let (Some(t), Some(d), Some(Value::List(labels))) = (
            row.first().and_then(Value::as_str),
            row.get(1).and_then(Value::as_str),
            row.get(2),
        ) else {
            continue;
        };
        let mut labels: Vec<String> = labels
            .iter()
            .filter_map(|l| l.as_str().map(str::to_string))
            .collect();
        labels.sort();
        let seen = others.entry((t.to_string(), d.to_string())).or_default();
        if !seen.contains(&labels) {
            seen.push(labels);
        }
    }
    let mut out = Vec::new();
    for (t, d, count) in counts {
        let Some(sets) = others.get(&(t.clone(), d.clone())) else {
            continue;
        };
        let single = sets.len() == 1;
        let mut classes: Vec<&String> = sets.iter().flatten().collect();
        classes.sort();
        classes.dedup();
        for other in classes.into_iter().filter(|c| view.label_visible(c)) {
            let mut entry = json!({
                "direction": d,
                "type": t,
                "other_class": other,
                "count": if single { json!(count) } else { Json::Null },
            });
            if !single {
                entry["type_count"] = json!(count);
            }
            out.push(entry);
        }
    }
    out.sort_by(|a, b| {
        (
            a["direction"].as_str(),
            a["type"].as_str(),
            a["other_class"].as_str(),
        )
            .cmp(&(
                b["direction"].as_str(),
                b["type"].as_str(),
                b["other_class"].as_str(),
            ))
    });
    Ok(out)
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Boolean(_) => "boolean",
        Value::Integer(_) => "integer",
        Value::Float(_) => "float",
        Value::String(_) => "string",
        Value::Bytes(_) => "bytes",
        Value::List(_) => "list",
        Value::Map(_) => "map",
        Value::Node { .. } | Value::Relationship { .. } | Value::Path { .. } => "graph",
        Value::Temporal { .. } => "temporal",
        Value::Point(_) => "point",
        Value::Unknown { .. } => "unknown",
    }
}
