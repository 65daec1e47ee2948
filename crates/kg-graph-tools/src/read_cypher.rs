//! `run_read_cypher`: Cypher written by an LLM or a user, run only after every layer of the
//! read-only guard (DESIGN.md §4): the lexer-based check and LIMIT (`guard`), the labels and
//! relationship types checked against the live schema, the graph's own `EXPLAIN` verdict
//! (`explain`), and READ access mode for the run itself.

use crate::args;
use crate::catalog::ToolOutput;
use crate::explain::require_read_only;
use crate::graph_error::{
    graph_error, too_expensive, too_expensive_by_graph, withheld_graph_error,
};
use crate::guard::{self, Rejection};
use crate::neighbors::{graph_edge, graph_node};
use crate::schema::{require_label, require_relationship_type};
use crate::session::Graph;
use kg_graph_profile::Profile;
use kg_wit::types::{Error, ErrorCode, GraphData};
use neo4j_client::{AccessMode, Transport, Value};
use serde_json::{Map, Value as Json, json};

pub const NAME: &str = "run_read_cypher";
const MAX_QUERY_CHARS: usize = 8_000;
const MAX_PARAMETERS: usize = 50;
/// The deepest a parameter value may nest (lists and maps): far more than any real value
/// needs, small enough that no layer between here and the graph has to recurse deeply.
pub const MAX_PARAMETER_DEPTH: usize = 32;
pub const MAX_ROWS: i64 = 1_000;

pub fn spec() -> (&'static str, &'static str, Json) {
    (
        NAME,
        "Run one read-only Cypher query (MATCH … RETURN …) when no other tool fits. Writes, LOAD CSV, admin commands and procedures other than db.labels/db.relationshipTypes/db.propertyKeys/db.schema.* are refused; labels and relationship types must exist; pass values as $parameters; at most `limit` rows come back. Unbounded work is refused (query_too_expensive): range() needs literal bounds at most 100000 apart, variable-length patterns an upper bound of at most 10 hops (`[*1..3]`). `PROFILE <query>` adds the measured plan.",
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS, "description": "One Cypher statement ending in RETURN, e.g. \"MATCH (s:Supplier)-[:SUPPLIES]->(p:Product) RETURN s.name, count(p) AS products ORDER BY products DESC\"."},
                "parameters": {"type": "object", "maxProperties": MAX_PARAMETERS, "description": "Values for the query's $parameters."},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_ROWS, "default": 100, "description": "Most rows to return; a larger LIMIT in the query is lowered to this."}
            },
            "required": ["query"],
            "additionalProperties": false
        }),
    )
}

pub fn run<T: Transport>(
    client: &Graph<'_, T>,
    transport: &T,
    arguments: &str,
) -> Result<ToolOutput, Error> {
    let args = args::object(NAME, arguments, &["query", "parameters", "limit"])?;
    let query = args::optional_string(&args, "query")?
        .ok_or_else(|| args::invalid("`query` is required"))?;
    if query.chars().count() > MAX_QUERY_CHARS {
        return Err(args::invalid(format!(
            "`query` is longer than {MAX_QUERY_CHARS} characters"
        )));
    }
    let parameters = match args.get("parameters") {
        None | Some(Json::Null) => Map::new(),
        Some(Json::Object(p)) if p.len() <= MAX_PARAMETERS => p.clone(),
        Some(_) => {
            return Err(args::invalid(format!(
                "`parameters` must be an object with at most {MAX_PARAMETERS} values"
            )));
        }
    };
    if let Some((name, depth)) = parameters
        .iter()
        .map(|(k, v)| (k, depth(v, MAX_PARAMETER_DEPTH + 1)))
        .find(|(_, d)| *d > MAX_PARAMETER_DEPTH)
    {
        let mut e = args::invalid(format!(
            "`parameters.{name}` nests more than {MAX_PARAMETER_DEPTH} levels of lists and maps ({depth}+); flatten it"
        ));
        e.detail = Some(
            json!({"code": "invalid_parameters", "parameter": name, "max_depth": MAX_PARAMETER_DEPTH})
                .to_string(),
        );
        return Err(e);
    }
    let limit = args::optional_integer(&args, "limit", 100, 1, MAX_ROWS)?;

    let checked =
        guard::check_for(&query, limit as usize, &client.view()).map_err(|r| match r {
            Rejection::Refused(r) => {
                args::invalid(format!("`query` refused by the read-only guard: {}", r.0))
            }
            Rejection::TooExpensive(e) => too_expensive(
                format!("`query` is too expensive: {}", e.message),
                json!({"construct": e.construct, "excerpt": e.excerpt}),
            ),
        })?;
    if !checked.labels.is_empty() && !checked.relationship_types.is_empty() {
        client.read_both_lists().map_err(graph_error)?;
    }
    if !checked.labels.is_empty() {
        let needed: Vec<&str> = checked.labels.iter().map(String::as_str).collect();
        let known = client.labels(&needed).map_err(graph_error)?;
        for label in &checked.labels {
            require_label(label, &known)?;
        }
    }
    if !checked.relationship_types.is_empty() {
        let needed: Vec<&str> = checked
            .relationship_types
            .iter()
            .map(String::as_str)
            .collect();
        let known = client.relationship_types(&needed).map_err(graph_error)?;
        for rel_type in &checked.relationship_types {
            require_relationship_type(rel_type, &known)?;
        }
    }
    // Under a policy the guard's rewrite passes the hidden names as parameters of its
    // own; a caller's may not take their names. (Without one nothing is added.)
    let policy = client.view().has_policy();
    if let Some(name) = parameters
        .keys()
        .find(|k| policy && k.to_ascii_lowercase().starts_with(guard::RESERVED_PREFIX))
    {
        return Err(args::invalid(format!(
            "`parameters.{name}`: names starting with `{}` are reserved for the guard",
            guard::RESERVED_PREFIX
        )));
    }
    let mut parameters = parameters;
    parameters.extend(checked.parameters.clone());
    // The plan of the statement itself: PROFILE would run it.
    require_read_only(transport, client.config(), &checked.statement, &parameters)?;
    let statement = if checked.profile {
        format!("PROFILE {}", checked.statement)
    } else {
        checked.statement.clone()
    };
    // Cypher from outside may cost anything the guard could not see: it runs where the
    // graph enforces the time limit (Neo4j ignores it on auto-commit requests).
    let result = client
        .run_bounded(&statement, parameters, AccessMode::Read)
        .map_err(|e| match e.kind {
            _ if policy => withheld_graph_error(&e, &checked.functions),
            _ if e.is_too_expensive() => too_expensive_by_graph(&e),
            neo4j_client::ErrorKind::Syntax | neo4j_client::ErrorKind::Client => Error::new(
                ErrorCode::InvalidArgument,
                format!("`query` was rejected by the graph: {e}"),
            ),
            _ => graph_error(e),
        })?;

    let truncated = result.rows.len() as i64 > limit;
    let rows: Vec<&Vec<Value>> = result.rows.iter().take(limit as usize).collect();
    let mut graph = GraphData {
        nodes: Vec::new(),
        edges: Vec::new(),
    };
    let profile = client.known_profile();
    for value in rows.iter().flat_map(|r| r.iter()) {
        collect_graph(&profile, value, &mut graph);
    }
    let data_rows: Vec<Json> = rows
        .iter()
        .map(|r| Json::Array(r.iter().map(Value::to_plain_json).collect()))
        .collect();
    let summary = format!(
        "{} row{} ({}){}",
        data_rows.len(),
        if data_rows.len() == 1 { "" } else { "s" },
        result.fields.join(", "),
        if truncated { ", more exist" } else { "" }
    );
    let mut data = json!({"statement": statement, "fields": result.fields, "rows": data_rows});
    if checked.profile {
        // The graph's measured plan (Neo4j's `profiledQueryPlan`), null if it sent none.
        data["profile"] = result.profile.clone().unwrap_or(Json::Null);
    }
    Ok(ToolOutput {
        data,
        summary,
        graph: (!graph.nodes.is_empty() || !graph.edges.is_empty()).then_some(graph),
        truncated,
    })
}

/// How deep `value` nests lists and maps (a scalar is 0), counted up to `stop`.
fn depth(value: &Json, stop: usize) -> usize {
    if stop == 0 {
        return 0;
    }
    let children: Box<dyn Iterator<Item = &Json>> = match value {
        Json::Array(items) => Box::new(items.iter()),
        Json::Object(map) => Box::new(map.values()),
        _ => return 0,
    };
    1 + children.map(|v| depth(v, stop - 1)).max().unwrap_or(0)
}

/// Nodes, relationships and paths anywhere in a value, once each, for the UI to draw.
fn collect_graph(profile: &Profile, value: &Value, graph: &mut GraphData) {
    match value {
        Value::Node { element_id, .. } => {
            if !graph.nodes.iter().any(|n| &n.id == element_id)
                && let Some(node) = graph_node(profile, value)
            {
                graph.nodes.push(node);
            }
        }
        Value::Relationship { element_id, .. } => {
            if !graph.edges.iter().any(|e| &e.id == element_id)
                && let Some(edge) = graph_edge(value)
            {
                graph.edges.push(edge);
            }
        }
        Value::Path {
            nodes,
            relationships,
        } => {
            for v in nodes.iter().chain(relationships) {
                collect_graph(profile, v, graph);
            }
        }
        Value::List(items) => items.iter().for_each(|v| collect_graph(profile, v, graph)),
        Value::Map(map) => map.values().for_each(|v| collect_graph(profile, v, graph)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(levels: usize) -> Json {
        (0..levels).fold(json!(1), |inner, _| json!({"a": [inner]}))
    }

    #[test]
    fn depth_counts_lists_and_maps() {
        assert_eq!(depth(&json!(1), 100), 0);
        assert_eq!(depth(&json!([1, {"a": 2}]), 100), 2);
        assert_eq!(depth(&nested(10), 100), 20);
        // Counting stops at the limit asked for.
        assert_eq!(depth(&nested(1000), 33), 33);
    }
}
