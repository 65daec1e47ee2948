//! `search_instances`: instances whose text properties contain the search term,
//! case-insensitively, ranked exact > prefix > contains.
//!
//! Candidates come from the full-text index `POST /actions/setup` creates over the
//! profile's text properties (`kg_graph_search`): the term's words, each as a prefix, all
//! required. The index's candidates are then checked and ranked here against the whole
//! term. Where the index is missing, a bounded scan of at most [`SCAN_LIMIT`] nodes
//! answers instead, and says so: never a scan of everything.

use crate::args;
use crate::catalog::ToolOutput;
use crate::cypher::quote_name;
use crate::graph_error::graph_error;
use crate::neighbors::{caption, plain};
use crate::ontology::META_LABELS;
use crate::schema::{require_label_unless_found, require_odd_label_first};
use crate::session::Graph;
use kg_graph_profile::{Profile, SEARCH_INDEX};
use kg_wit::types::{Error, GraphData, GraphNode};
use neo4j_client::{AccessMode, Transport, Value};
use serde_json::{Map, Value as Json, json};

pub const NAME: &str = "search_instances";
const MAX_TERM_CHARS: usize = 200;
/// Nodes a search without its index looks at, at most.
pub const SCAN_LIMIT: i64 = 10_000;
/// Candidates taken from the index per search (best scores first), at most.
const INDEX_CANDIDATES: i64 = 500;
/// Words of a term sent to the index, at most.
const MAX_WORDS: usize = 16;

pub fn spec() -> (&'static str, &'static str, Json) {
    (
        NAME,
        "Find entity instances whose key, caption (name) or other text properties contain the search term (case-insensitive), best matches first: exact, then prefix, then contains. Each match carries its label, its key (use it, with class_name when the value is not unique, as the instance of another tool) and its element_id.",
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

/// What a search looked at: the index's candidates, or a bounded scan.
pub struct Candidates {
    pub nodes: Vec<Value>,
    /// True when the search index is missing (the answer comes from a bounded scan).
    pub index_missing: bool,
    /// True when the candidates were cut (by the index's or the scan's limit).
    pub cut: bool,
}

/// The term's words as the index query: each word lower-cased and taken as a prefix, all
/// required. Words are runs of letters and digits, as the index's standard analyzer
/// splits text, so nothing of the user's input reaches Lucene's syntax.
pub fn index_query(term: &str) -> Option<String> {
    let words: Vec<String> = term
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .take(MAX_WORDS)
        .map(|w| format!("{}*", w.to_lowercase()))
        .collect();
    (!words.is_empty()).then(|| words.join(" AND "))
}

/// The nodes that may match `term`: from the search index when it exists and covers the
/// class, else from a bounded scan.
pub fn candidates<T: Transport>(
    client: &Graph<'_, T>,
    profile: &Profile,
    term: &str,
    class: Option<&str>,
    wanted: i64,
) -> Result<Candidates, Error> {
    Ok(candidates_and_exact(client, profile, term, class, wanted, false)?.0)
}

/// [`candidates`], and with `exact` the nodes whose key or caption is exactly `term`
/// ([`crate::instance::exact_matches`]) in the same round trip: the index's query and
/// the exact look-ups are one `UNION ALL` statement (index rows have a null `by_key`).
/// Without the index, the scan and the look-ups are two statements.
fn candidates_and_exact<T: Transport>(
    client: &Graph<'_, T>,
    profile: &Profile,
    term: &str,
    class: Option<&str>,
    wanted: i64,
    exact: bool,
) -> Result<(Candidates, Vec<Value>), Error> {
    let exact_part = exact
        .then(|| crate::instance::exact_statement(profile, term, class))
        .flatten();
    let indexed_class = class.is_none_or(|c| profile.label(c).is_some_and(|l| !l.text.is_empty()));
    let index_missing = if let (Some(query), true) = (index_query(term), indexed_class) {
        let filter = class
            .map(|c| format!(" WHERE node:{}", quote_name(c)))
            .unwrap_or_default();
        let mut statement = format!(
            "CALL db.index.fulltext.queryNodes($index, $query, {{limit: $candidates}}) YIELD node, score{filter} RETURN node, null AS by_key"
        );
        let limit = INDEX_CANDIDATES.max(wanted * 10);
        let mut params = Map::new();
        if let Some((text, exact_params)) = &exact_part {
            statement.push_str(" UNION ALL ");
            statement.push_str(text);
            params.extend(exact_params.clone());
        }
        params.insert("index".into(), json!(SEARCH_INDEX));
        params.insert("query".into(), json!(query));
        params.insert("candidates".into(), json!(limit));
        match client.run(&statement, params, AccessMode::Read) {
            Ok(result) => {
                let mut nodes = Vec::new();
                let mut exact_nodes = Vec::new();
                for row in result.rows {
                    if matches!(row.get(1), Some(Value::Boolean(_))) {
                        exact_nodes.extend(crate::instance::exact_row(row).map(|(n, _)| n));
                    } else {
                        nodes.extend(row.into_iter().next());
                    }
                }
                let cut = nodes.len() as i64 >= limit;
                return Ok((
                    Candidates {
                        nodes,
                        index_missing: false,
                        cut,
                    },
                    exact_nodes,
                ));
            }
            Err(e) if is_missing_index(&e) => {}
            Err(e) => return Err(graph_error(e)),
        }
        true
    } else {
        false
    };
    // No index to ask: the bounded scan, and the exact look-ups in a statement of their own.
    let found = scan(client, term, class, wanted, index_missing)?;
    let exact_nodes = match exact_part {
        Some((statement, params)) => client
            .run(&statement, params, AccessMode::Read)
            .map_err(graph_error)?
            .rows
            .into_iter()
            .filter_map(crate::instance::exact_row)
            .map(|(node, _)| node)
            .collect(),
        None => Vec::new(),
    };
    Ok((found, exact_nodes))
}

fn is_missing_index(e: &neo4j_client::Neo4jError) -> bool {
    e.message
        .to_lowercase()
        .contains("no such fulltext schema index")
}

/// At most [`SCAN_LIMIT`] nodes (of the class, or any but the ontology's), those with a
/// string property containing the term.
fn scan<T: Transport>(
    client: &Graph<'_, T>,
    term: &str,
    class: Option<&str>,
    wanted: i64,
    index_missing: bool,
) -> Result<Candidates, Error> {
    let pattern = match class {
        Some(class) => format!("MATCH (n:{}) WITH n LIMIT $scan ", quote_name(class)),
        None => format!(
            "MATCH (n) WITH n LIMIT $scan WHERE {} ",
            META_LABELS
                .map(|l| format!("NOT n:{}", quote_name(l)))
                .join(" AND ")
        ),
    };
    // String predicates on non-strings are null in Cypher (no error), and CASE is lazy,
    // so only string properties are lowered and compared: portable across Neo4j and
    // devgraph.
    // A property the audience may not see is not searched: a match would tell its value.
    let view = client.view();
    let hidden: Vec<&str> = view
        .hidden_label_properties
        .values()
        .flatten()
        .map(String::as_str)
        .collect();
    let unseen = if hidden.is_empty() {
        ""
    } else {
        "NOT k IN $hidden AND "
    };
    let statement = format!(
        "{pattern}WITH n, [k IN keys(n) WHERE {unseen}CASE WHEN n[k] STARTS WITH '' THEN toLower(n[k]) END CONTAINS $term] AS matched \
         WHERE size(matched) > 0 RETURN n LIMIT $limit"
    );
    let limit = INDEX_CANDIDATES.max(wanted * 10);
    let mut params = Map::new();
    if !hidden.is_empty() {
        params.insert("hidden".into(), json!(hidden));
    }
    params.insert("term".into(), json!(term.to_lowercase()));
    params.insert("scan".into(), json!(SCAN_LIMIT));
    params.insert("limit".into(), json!(limit));
    let result = client
        .run(&statement, params, AccessMode::Read)
        .map_err(graph_error)?;
    let cut = result.rows.len() as i64 >= limit;
    Ok(Candidates {
        nodes: result
            .rows
            .into_iter()
            .filter_map(|r| r.into_iter().next())
            .collect(),
        index_missing,
        cut,
    })
}

/// How well a node matches: 0 exact, 1 prefix, 2 contains (on its best property), with
/// the properties that contain the term; None when none does. A profiled label's text
/// properties are the ones looked at; an unprofiled node's every string property.
fn rank(
    profile: &Profile,
    labels: &[String],
    properties: &Map<String, Json>,
    term: &str,
) -> Option<(usize, Vec<String>)> {
    let text: Option<&Vec<String>> = labels
        .iter()
        .find_map(|l| profile.label(l).map(|p| &p.text).filter(|t| !t.is_empty()));
    let mut best = None;
    let mut matched = Vec::new();
    for (key, value) in properties {
        if text.is_some_and(|t| !t.contains(key)) {
            continue;
        }
        let Some(value) = value.as_str().map(str::to_lowercase) else {
            continue;
        };
        let quality = if value == term {
            0
        } else if value.starts_with(term) {
            1
        } else if value.contains(term) {
            2
        } else {
            continue;
        };
        matched.push(key.clone());
        best = Some(best.map_or(quality, |b: usize| b.min(quality)));
    }
    best.map(|b| (b, matched))
}

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
    if let Some(class) = &class {
        require_odd_label_first(client, class)?;
    }
    let profile = client.profile().map_err(graph_error)?;
    // Exact keys and captions by their indexes, whatever the index's candidates hold.
    let (mut found, exact) =
        candidates_and_exact(client, &profile, &term, class.as_deref(), limit, true)?;
    found.nodes.splice(0..0, exact);
    if let Some(class) = &class {
        require_label_unless_found(client, class, !found.nodes.is_empty())?;
    }
    let lower = term.to_lowercase();
    let mut ranked = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for node in &found.nodes {
        let Value::Node {
            element_id,
            labels,
            properties,
        } = node
        else {
            continue;
        };
        if !seen.insert(element_id) {
            continue;
        }
        let properties = plain(properties);
        let Some((quality, matched)) = rank(&profile, labels, &properties, &lower) else {
            continue;
        };
        let key = profile.key_of(labels, &properties);
        let caption = caption(&profile, labels, &properties).unwrap_or_else(|| element_id.clone());
        let order = key
            .as_ref()
            .map(|(_, k)| Json::Object(k.clone()).to_string())
            .unwrap_or_default();
        ranked.push((
            quality, order, caption, element_id, labels, properties, matched, key,
        ));
    }
    ranked.sort_by(|a, b| (a.0, &a.1, &a.2, a.3).cmp(&(b.0, &b.1, &b.2, b.3)));
    let truncated = ranked.len() as i64 > limit || found.cut;
    let mut matches = Vec::new();
    let mut nodes = Vec::new();
    for (quality, _, caption, element_id, labels, properties, matched, key) in
        ranked.into_iter().take(limit as usize)
    {
        let quality = ["exact", "prefix", "contains"][quality.min(2)];
        let (label, key) = match key {
            Some((label, key)) => (Some(label), Some(key)),
            None => (labels.first().cloned(), None),
        };
        matches.push(json!({
            "element_id": element_id,
            "labels": labels,
            "label": label,
            "key": key,
            "caption": caption,
            "match": quality,
            "matched_properties": matched,
            "properties": properties,
        }));
        nodes.push(GraphNode {
            id: element_id.clone(),
            labels: labels.clone(),
            caption,
            properties: props_json(properties),
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
    let summary = if found.index_missing {
        format!(
            "{summary} (the search index is missing: looked at {SCAN_LIMIT} nodes at most; run POST /actions/setup)"
        )
    } else {
        summary
    };
    let mut data = json!({"matches": matches});
    if found.index_missing {
        data["index"] = json!({"missing": SEARCH_INDEX, "scanned_at_most": SCAN_LIMIT, "hint": "POST /actions/setup creates it"});
    }
    Ok(ToolOutput {
        data,
        summary,
        graph: (!nodes.is_empty()).then(|| GraphData {
            nodes,
            edges: Vec::new(),
        }),
        truncated,
    })
}

fn props_json(properties: Map<String, Json>) -> String {
    Json::Object(properties).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_queries_are_words_as_required_prefixes() {
        assert_eq!(index_query("PO-0003").as_deref(), Some("po* AND 0003*"));
        assert_eq!(index_query("ACME").as_deref(), Some("acme*"));
        assert_eq!(index_query("part 1").as_deref(), Some("part* AND 1*"));
        // Lucene's syntax in the input is never interpreted: only words get through.
        assert_eq!(
            index_query("a:b AND (c* OR \"d\")~2 \\").as_deref(),
            Some("a* AND b* AND and* AND c* AND or* AND d* AND 2*")
        );
        assert_eq!(index_query("-- !"), None);
    }
}
