//! `search_instances`: instances whose string properties contain the search term,
//! case-insensitively, ranked exact > prefix > contains.

use crate::args;
use crate::catalog::ToolOutput;
use crate::cypher::quote_name;
use crate::graph_error::graph_error;
use crate::ontology::META_LABELS;
use crate::schema::{require_label_unless_found, require_odd_label_first};
use crate::session::Graph;
use kg_wit::types::{Error, GraphData, GraphNode};
use neo4j_client::{AccessMode, Transport, Value};
use serde_json::{Map, Value as Json, json};

pub const NAME: &str = "search_instances";
const MAX_TERM_CHARS: usize = 200;

pub fn spec() -> (&'static str, &'static str, Json) {
    (
        NAME,
        "Find entity instances whose name, id or any text property contains the search term (case-insensitive), best matches first: exact, then prefix, then contains.",
        json!({
            "type": "object",
            "properties": {
                "search_term": {"type": "string", "minLength": 1, "maxLength": MAX_TERM_CHARS, "description": "Text to look for, e.g. \"ACME\" or \"PO-0003\"."},
                "class_name": {"type": "string", "description": "Only instances of this class (label)."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10}
            },
            "required": ["search_term"],
            "additionalProperties": false
        }),
    )
}

/// String predicates on non-strings are null in Cypher (no error), and CASE is lazy, so
/// only string properties are lowered and compared — portable across Neo4j and devgraph.
const MATCHING: &str = "WITH n, [k IN keys(n) WHERE CASE WHEN n[k] STARTS WITH '' THEN toLower(n[k]) END CONTAINS $term] AS matched \
     WHERE size(matched) > 0 \
     WITH n, matched, CASE \
       WHEN any(k IN matched WHERE toLower(n[k]) = $term) THEN 0 \
       WHEN any(k IN matched WHERE toLower(n[k]) STARTS WITH $term) THEN 1 \
       ELSE 2 END AS rank \
     RETURN n, rank, matched ORDER BY rank, n.id, n.name LIMIT $limit";

pub fn run<T: Transport>(client: &Graph<'_, T>, arguments: &str) -> Result<ToolOutput, Error> {
    let args = args::object(NAME, arguments, &["search_term", "class_name", "limit"])?;
    let term = args::optional_string(&args, "search_term")?
        .ok_or_else(|| args::invalid("`search_term` is required"))?;
    if term.chars().count() > MAX_TERM_CHARS {
        return Err(args::invalid(format!(
            "`search_term` is longer than {MAX_TERM_CHARS} characters"
        )));
    }
    let class = args::optional_string(&args, "class_name")?;
    let limit = args::optional_integer(&args, "limit", 10, 1, 100)?;

    let pattern = match &class {
        Some(class) => {
            require_odd_label_first(client, class)?;
            format!("MATCH (n:{}) ", quote_name(class))
        }
        None => format!(
            "MATCH (n) WHERE {} ",
            META_LABELS
                .map(|l| format!("NOT n:{}", quote_name(l)))
                .join(" AND ")
        ),
    };
    let mut params = Map::new();
    params.insert("term".into(), json!(term.to_lowercase()));
    // One row more than asked tells whether the answer was cut.
    params.insert("limit".into(), json!(limit + 1));
    let result = client
        .run(&format!("{pattern}{MATCHING}"), params, AccessMode::Read)
        .map_err(graph_error)?;
    if let Some(class) = &class {
        require_label_unless_found(client, class, !result.rows.is_empty())?;
    }
    let truncated = result.rows.len() as i64 > limit;
    let mut matches = Vec::new();
    let mut nodes = Vec::new();
    for row in result.rows.iter().take(limit as usize) {
        let Some(Value::Node {
            element_id,
            labels,
            properties,
        }) = row.first()
        else {
            continue;
        };
        let rank = row.get(1).and_then(Value::as_i64).unwrap_or(2);
        let matched: Vec<Json> = match row.get(2) {
            Some(Value::List(keys)) => keys.iter().map(Value::to_plain_json).collect(),
            _ => Vec::new(),
        };
        let props: Map<String, Json> = properties
            .iter()
            .map(|(k, v)| (k.clone(), v.to_plain_json()))
            .collect();
        let caption = ["name", "id"]
            .iter()
            .find_map(|k| properties.get(*k).and_then(Value::as_str))
            .unwrap_or(element_id)
            .to_string();
        let quality = ["exact", "prefix", "contains"][rank.clamp(0, 2) as usize];
        matches.push(json!({
            "element_id": element_id,
            "labels": labels,
            "caption": caption,
            "match": quality,
            "matched_properties": matched,
            "properties": props,
        }));
        nodes.push(GraphNode {
            id: element_id.clone(),
            labels: labels.clone(),
            caption,
            properties: Json::Object(props).to_string(),
        });
    }
    let summary = match matches.first() {
        None => format!("no instance matches \"{term}\""),
        Some(best) => format!(
            "{} instance{} match \"{term}\"{}; best: {} ({})",
            matches.len(),
            if matches.len() == 1 { "" } else { "s" },
            if truncated { " (more exist)" } else { "" },
            best["caption"].as_str().unwrap_or_default(),
            best["match"].as_str().unwrap_or_default()
        ),
    };
    Ok(ToolOutput {
        data: json!({"matches": matches}),
        summary,
        graph: (!nodes.is_empty()).then(|| GraphData {
            nodes,
            edges: Vec::new(),
        }),
        truncated,
    })
}
