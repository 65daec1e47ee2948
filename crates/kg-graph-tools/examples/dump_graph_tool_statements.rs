//! Prints, one JSON string per line, every statement the query tools send for
//! representative arguments: each tool of `specs()` called through `call_in` (with the
//! demo's declared graph profile, `catalog/graph-profile.toml`) against a graph
//! stand-in that records the statements and answers the demo schema (labels, relationship
//! types, counts; every other statement an empty result), once with the ontology labels
//! and once without (the tools' fallback paths). `run_read_cypher` is included for the
//! guard's own rewriting (the LIMIT it adds); its `EXPLAIN` preflight is not printed (it
//! wraps the input, see devgraph's capture). Input of the Cypher lint gate
//! (`tools/cypher-lint`, issue #15):
//!
//! `cargo run --release --example dump_graph_tool_statements > graph-tools.jsonl`

use neo4j_client::{Auth, Client, Config, HttpRequest, HttpResponse, Transport, TransportError};
use serde_json::{Value as Json, json};
use std::cell::RefCell;
use std::collections::BTreeSet;

const LABELS: [&str; 9] = [
    "Account",
    "Invoice",
    "LineItem",
    "Payment",
    "Product",
    "PurchaseOrder",
    "Supplier",
    "OntologyClass",
    "OntologyRelationship",
];
const TYPES: [&str; 9] = [
    "BILLS",
    "CHARGED_TO",
    "COMPONENT_OF",
    "FOR_PRODUCT",
    "FROM_ACCOUNT",
    "HAS_LINE",
    "PAYS",
    "PLACED_WITH",
    "SUPPLIES",
];

/// The graph stand-in: records each statement, answers the schema look-ups.
struct Recorder {
    ontology: bool,
    statements: RefCell<Vec<String>>,
}

impl Transport for &Recorder {
    fn send(&self, request: HttpRequest) -> Result<HttpResponse, TransportError> {
        let body: Json =
            serde_json::from_slice(request.body.as_deref().unwrap_or_default()).unwrap_or_default();
        let statement = body["statement"].as_str().unwrap_or_default().to_string();
        let labels: Vec<&str> = LABELS
            .iter()
            .copied()
            .filter(|l| self.ontology || !l.starts_with("Ontology"))
            .collect();
        let (fields, values): (Vec<&str>, Vec<Json>) = if statement.contains("db.labels()") {
            (vec!["label"], labels.iter().map(|l| json!([l])).collect())
        } else if statement.contains("db.relationshipTypes()") {
            (
                vec!["relationshipType"],
                TYPES.iter().map(|t| json!([t])).collect(),
            )
        } else if statement.contains("WITH count(n) AS count RETURN") {
            // The counts per label (one UNION ALL part each, the label as `$lN`).
            let rows = (0..labels.len())
                .filter_map(|i| body["parameters"].get(format!("l{i}")))
                .map(|l| json!([l, 3]))
                .collect();
            (vec!["label", "count"], rows)
        } else if statement.contains("AS by_key") {
            // The instance look-up: found, by its key; a path's two ends are looked up
            // in one statement (`$ref0`, `$ref1`, a `side` column).
            let node = |id: &Json| {
                // An element id of its own per reference: a path's two ends must differ.
                let element_id = format!(
                    "4:demo:{}",
                    id.as_str()
                        .unwrap_or_default()
                        .bytes()
                        .fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)))
                );
                json!({"elementId": element_id, "labels": ["Product"],
                       "properties": {"id": id, "name": "Sample"}})
            };
            let parameters = &body["parameters"];
            if parameters.get("ref0").is_some() {
                (
                    vec!["node", "by_key", "side"],
                    vec![
                        json!([node(&parameters["ref0"]), true, 0]),
                        json!([node(&parameters["ref1"]), true, 1]),
                    ],
                )
            } else {
                (
                    vec!["node", "by_key"],
                    vec![json!([node(&parameters["ref"]), true])],
                )
            }
        } else {
            (vec![], vec![])
        };
        let mut answer = json!({"data": {"fields": fields, "values": values}});
        if statement.starts_with("EXPLAIN ") {
            // run_read_cypher's preflight: a read, so the tool goes on to run it.
            answer["queryType"] = json!("r");
        } else if !statement.is_empty() {
            self.statements.borrow_mut().push(statement);
        }
        Ok(HttpResponse {
            status: 200,
            headers: vec![("content-type".into(), "application/json".into())],
            body: answer.to_string().into_bytes(),
        })
    }
}

/// Representative arguments per tool (every tool must have some).
fn calls() -> Vec<(&'static str, Vec<Json>)> {
    vec![
        (
            "search_instances",
            vec![
                json!({"search_term": "acme"}),
                json!({"search_term": "PO-0001", "class_name": "PurchaseOrder", "limit": 5}),
            ],
        ),
        (
            "get_instances_by_class",
            vec![
                json!({"class_name": "PurchaseOrder"}),
                json!({"class_name": "PurchaseOrder", "limit": 10, "after": "PO-0020", "filters": [
                    {"property": "status", "value": "approved"},
                    {"property": "amount", "op": "gt", "value": 5000},
                    {"property": "amount", "op": "gte", "value": 1},
                    {"property": "amount", "op": "lt", "value": 9000},
                    {"property": "amount", "op": "lte", "value": 9000.5},
                    {"property": "status", "op": "ne", "value": "paid"},
                    {"property": "id", "op": "contains", "value": "00"},
                    {"property": "id", "op": "starts_with", "value": "PO-"},
                    {"property": "approved", "value": true}
                ]}),
            ],
        ),
        (
            "get_instance_neighbors",
            vec![
                json!({"instance": "PRD-036"}),
                json!({"instance": "PRD-036", "hops": 2, "direction": "in"}),
                json!({"instance": "PO-0001", "class_name": "PurchaseOrder", "hops": 1, "direction": "out",
                       "relationship_types": ["PLACED_WITH", "CHARGED_TO"], "limit": 10}),
                json!({"instance": "SUP-001", "direction": "both"}),
            ],
        ),
        (
            "find_path_between_instances",
            vec![
                json!({"start": "SUP-001", "end": "ACC-MAIN"}),
                json!({"start": "SUP-001", "end": "PRD-036", "max_depth": 6, "limit": 3}),
            ],
        ),
        ("get_ontology_classes", vec![json!({})]),
        ("get_ontology_relationships", vec![json!({})]),
        (
            "describe_class",
            vec![
                json!({"class_name": "Supplier"}),
                json!({"class_name": "PurchaseOrder", "sample_size": 0}),
            ],
        ),
        (
            "get_node_statistics",
            vec![
                json!({}),
                json!({"label": "PurchaseOrder", "sample_size": 2}),
                json!({"sample_size": 0}),
            ],
        ),
        (
            "run_read_cypher",
            vec![
                json!({"query": "MATCH (s:Supplier)-[:SUPPLIES]->(p:Product) RETURN s.name, count(p) AS n ORDER BY n DESC", "limit": 5}),
                json!({"query": "MATCH (o:PurchaseOrder) WHERE o.amount > $min RETURN o LIMIT 5000", "parameters": {"min": 10}}),
                json!({"query": "PROFILE MATCH (s:Supplier) RETURN s.name"}),
            ],
        ),
    ]
}

fn main() {
    let calls = calls();
    for (name, _, _) in kg_graph_tools::specs() {
        assert!(
            calls.iter().any(|(n, _)| *n == name),
            "no representative arguments for the tool `{name}`"
        );
    }
    let mut out = BTreeSet::new();
    for ontology in [true, false] {
        let recorder = Recorder {
            ontology,
            statements: RefCell::new(Vec::new()),
        };
        let config = Config {
            origin: neo4j_client::Url::parse("http://127.0.0.1:7474").expect("a URL"),
            database: "neo4j".into(),
            auth: Auth::None,
        };
        let client = Client::new(config, &recorder);
        let declared = kg_graph_tools::profile::Declared::parse(include_str!(
            "../../../catalog/graph-profile.toml"
        ))
        .expect("the demo's graph profile parses");
        for (name, arguments) in &calls {
            for arguments in arguments {
                let session = kg_graph_tools::Session::with_declared(declared.clone());
                if let Err(e) = kg_graph_tools::call_in(
                    &session,
                    &client,
                    &&recorder,
                    name,
                    &arguments.to_string(),
                ) {
                    eprintln!(
                        "dump_graph_tool_statements: {name} {arguments}: {}",
                        e.message
                    );
                    std::process::exit(1);
                }
            }
        }
        out.extend(recorder.statements.take());
    }
    for statement in out {
        println!("{}", Json::String(statement));
    }
}
