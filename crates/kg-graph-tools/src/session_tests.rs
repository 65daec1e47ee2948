//! A request's tool calls against a scripted graph: schema look-ups shared through the
//! [`Session`], notifications recorded and turned into hints and log lines, and the
//! neighbours' business keys.

use crate::{Session, call_in, log_line};
use neo4j_client::{Auth, Client, Config, HttpRequest, HttpResponse, Transport, TransportError};
use serde_json::{Value as Json, json};
use std::sync::Mutex;

/// The labels the scripted graph has.
const KNOWN_LABELS: [&str; 3] = ["PurchaseOrder", "Supplier", "Tag"];
/// Its relationship types.
const KNOWN_TYPES: [&str; 2] = ["PLACED_WITH", "TAGGED"];

/// Answers each statement from a script (typed JSON) and records the statements.
#[derive(Default)]
struct Graph {
    statements: Mutex<Vec<String>>,
    notifications: Json,
}

fn s(v: &str) -> Json {
    json!({"$type": "String", "_value": v})
}

fn node(element_id: &str, label: &str, props: Json) -> Json {
    let properties: serde_json::Map<String, Json> = props
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), s(v.as_str().unwrap_or_default())))
        .collect();
    json!({"$type": "Node", "_value": {"_element_id": element_id, "_labels": [label], "_properties": properties}})
}

fn rel(element_id: &str, start: &str, end: &str, rel_type: &str) -> Json {
    json!({"$type": "Relationship", "_value": {"_element_id": element_id, "_start_node_element_id": start,
        "_end_node_element_id": end, "_type": rel_type, "_properties": {}}})
}

impl Transport for &Graph {
    fn send(&self, request: HttpRequest) -> Result<HttpResponse, TransportError> {
        let body: Json =
            serde_json::from_slice(&request.body.unwrap_or_default()).unwrap_or_default();
        let statement = body["statement"].as_str().unwrap_or_default().to_string();
        self.statements.lock().unwrap().push(statement.clone());
        if statement.starts_with("EXPLAIN ") {
            return Ok(HttpResponse {
                status: 200,
                headers: vec![("content-type".into(), "application/json".into())],
                body: br#"{"queryType": "r"}"#.to_vec(),
            });
        }
        // A class pattern of a label the graph does not have matches nothing, as on Neo4j.
        if let Some(rest) = statement.split("(n:`").nth(1)
            && let Some(label) = rest.split('`').next()
            && !KNOWN_LABELS.contains(&label)
        {
            let answer = json!({"data": {"fields": ["n"], "values": []}, "bookmarks": ["b"]});
            return Ok(HttpResponse {
                status: 200,
                headers: vec![("content-type".into(), "application/vnd.neo4j.query".into())],
                body: answer.to_string().into_bytes(),
            });
        }
        let po = node(
            "4:x:1",
            "PurchaseOrder",
            json!({"id": "PO-0003", "status": "draft"}),
        );
        let (fields, values) = if statement.contains("UNION ALL CALL db.relationshipTypes()") {
            let tagged = |list: &str, names: &[&str]| -> Vec<Json> {
                names.iter().map(|n| json!([s(list), s(n)])).collect()
            };
            let mut rows = tagged("label", &KNOWN_LABELS);
            rows.extend(tagged("type", &KNOWN_TYPES));
            (json!(["list", "name"]), Json::Array(rows))
        } else if statement.contains("db.labels()") {
            (
                json!(["label"]),
                Json::Array(KNOWN_LABELS.iter().map(|l| json!([s(l)])).collect()),
            )
        } else if statement.contains("db.relationshipTypes()") {
            (
                json!(["relationshipType"]),
                Json::Array(KNOWN_TYPES.iter().map(|t| json!([s(t)])).collect()),
            )
        } else if statement.starts_with("SHOW CONSTRAINTS") {
            // Keys from the graph's own constraints: the session has no declared profile.
            let list = |name: &str| json!({"$type": "List", "_value": [s(name)]});
            let unique = |label: &str| json!([list(label), list("id"), s("UNIQUENESS")]);
            (
                json!(["labelsOrTypes", "properties", "type"]),
                json!([unique("PurchaseOrder"), unique("Supplier")]),
            )
        } else if statement.contains("AS by_key") {
            (
                json!(["node", "by_key"]),
                json!([[po, {"$type": "Boolean", "_value": true}]]),
            )
        } else if statement.contains("MATCH p =") {
            let supplier = node(
                "4:x:2",
                "Supplier",
                json!({"id": "SUP-001", "name": "ACME Industrial"}),
            );
            let tag = node("4:x:3", "Tag", json!({"name": "urgent"}));
            let path = |other: &Json, r: Json| json!({"$type": "Path", "_value": [po, r, other]});
            // The page of paths, then the degree of each type the statement counts, in
            // the graph's type order (one of each kind the paths show).
            let degrees: Vec<Json> = KNOWN_TYPES
                .iter()
                .map(|t| {
                    let n = if ["PLACED_WITH", "TAGGED"].contains(t) {
                        "1"
                    } else {
                        "0"
                    };
                    json!({"$type": "Integer", "_value": n})
                })
                .collect();
            (
                json!(["paths", "degrees"]),
                json!([[
                    {"$type": "List", "_value": [
                        path(&supplier, rel("5:x:1", "4:x:1", "4:x:2", "PLACED_WITH")),
                        path(&tag, rel("5:x:2", "4:x:1", "4:x:3", "TAGGED"))
                    ]},
                    {"$type": "List", "_value": degrees}
                ]]),
            )
        } else {
            (json!(["n"]), json!([[{"$type": "Integer", "_value": "1"}]]))
        };
        let answer = json!({"data": {"fields": fields, "values": values}, "bookmarks": ["b"],
            "notifications": if statement.starts_with("MATCH (a:") { self.notifications.clone() } else { json!([]) }});
        Ok(HttpResponse {
            status: 200,
            headers: vec![("content-type".into(), "application/vnd.neo4j.query".into())],
            body: answer.to_string().into_bytes(),
        })
    }
}

fn client_of(graph: &Graph) -> Client<&Graph> {
    Client::new(
        Config {
            origin: neo4j_client::Url::parse("http://graph").expect("a URL"),
            database: "neo4j".into(),
            auth: Auth::None,
        },
        graph,
    )
}

fn schema_statements(graph: &Graph) -> usize {
    graph
        .statements
        .lock()
        .unwrap()
        .iter()
        .filter(|s| s.contains("db.labels()") || s.contains("db.relationshipTypes()"))
        .count()
}

#[test]
fn a_requests_tool_calls_look_the_schema_up_once() {
    let graph = Graph::default();
    let client = client_of(&graph);
    let session = Session::new();
    let calls = [
        (
            "get_instance_neighbors",
            json!({"instance": "PO-0003", "class_name": "PurchaseOrder", "relationship_types": ["PLACED_WITH"]}),
        ),
        ("get_instances_by_class", json!({"class_name": "Supplier"})),
        (
            "get_instance_neighbors",
            json!({"instance": "PO-0003", "class_name": "PurchaseOrder", "relationship_types": ["TAGGED"]}),
        ),
        (
            "search_instances",
            json!({"search_term": "acme", "class_name": "Supplier"}),
        ),
    ];
    for (tool, args) in &calls {
        call_in(&session, &client, &&graph, tool, &args.to_string()).unwrap();
    }
    // One db.relationshipTypes() for the four calls, and no db.labels(): each call found
    // instances of its class, which proves the label exists.
    assert_eq!(
        schema_statements(&graph),
        1,
        "{:?}",
        graph.statements.lock().unwrap()
    );
    assert_eq!(session.schema_lookups(), 1);
    // The profile (the graph's constraints) is read once for the four calls too.
    assert_eq!(session.constraint_lookups(), 1);

    // Without a shared session (the old behaviour), every call looks it up again.
    let fresh = Graph::default();
    let c = client_of(&fresh);
    for (tool, args) in &calls {
        crate::call(&c, &&fresh, tool, &args.to_string()).unwrap();
    }
    assert_eq!(schema_statements(&fresh), 2);
}

#[test]
fn an_unknown_name_refreshes_the_list_once_then_fails_with_suggestions() {
    let graph = Graph::default();
    let client = client_of(&graph);
    let session = Session::new();
    call_in(
        &session,
        &client,
        &&graph,
        "get_instances_by_class",
        r#"{"class_name": "Supplier"}"#,
    )
    .unwrap();
    // Instances found: no look-up. None found for an unknown class: the list is read,
    // and the error suggests the close name.
    let e = call_in(
        &session,
        &client,
        &&graph,
        "get_instances_by_class",
        r#"{"class_name": "Suppliers"}"#,
    )
    .unwrap_err();
    assert!(
        e.message.contains("did you mean `Supplier`"),
        "{}",
        e.message
    );
    let e = call_in(
        &session,
        &client,
        &&graph,
        "get_instances_by_class",
        r#"{"class_name": "Warehouse"}"#,
    )
    .unwrap_err();
    // Not in the list read in this request (a write of this request may have created
    // it): the list is read once more, and only once.
    assert!(e.message.contains("Warehouse"));
    assert_eq!(schema_statements(&graph), 2);
    let e = call_in(
        &session,
        &client,
        &&graph,
        "get_node_statistics",
        r#"{"label": "Warehouses"}"#,
    )
    .unwrap_err();
    assert!(e.message.contains("Warehouses"));
    assert_eq!(schema_statements(&graph), 2);
}

#[test]
fn a_cypher_pattern_with_labels_and_types_reads_both_lists_in_one_statement() {
    let graph = Graph::default();
    let client = client_of(&graph);
    let session = Session::new();
    let read = |query: &str| {
        call_in(
            &session,
            &client,
            &&graph,
            "run_read_cypher",
            &json!({ "query": query }).to_string(),
        )
    };
    read("MATCH (p:PurchaseOrder)-[:PLACED_WITH]->(s:Supplier) RETURN p.id").unwrap();
    assert_eq!(
        schema_statements(&graph),
        1,
        "{:?}",
        graph.statements.lock().unwrap()
    );
    // Both lists are this request's now: a later pattern reads neither.
    read("MATCH (p:PurchaseOrder)-[:TAGGED]->(t:Tag) RETURN t.name").unwrap();
    assert_eq!(schema_statements(&graph), 1);
    // A type neither list has: that list alone is read once more, then the error.
    let e = read("MATCH (p:PurchaseOrder)-[:SHIPS_TO]->(s:Supplier) RETURN p.id").unwrap_err();
    assert!(e.message.contains("SHIPS_TO"), "{}", e.message);
    let statements = graph.statements.lock().unwrap().clone();
    assert_eq!(schema_statements(&graph), 2, "{statements:?}");
    assert!(
        statements
            .iter()
            .any(|s| s.starts_with("CALL db.relationshipTypes()"))
    );
    assert_eq!(session.schema_lookups(), 2);
}

#[test]
fn neighbours_carry_their_element_ids_and_business_keys() {
    let graph = Graph::default();
    let client = client_of(&graph);
    let out = call_in(
        &Session::new(),
        &client,
        &&graph,
        "get_instance_neighbors",
        r#"{"instance": "PO-0003"}"#,
    )
    .unwrap();
    assert_eq!(
        out.data["instance"],
        json!({"element_id": "4:x:1", "label": "PurchaseOrder", "key": {"id": "PO-0003"}, "caption": "PO-0003"})
    );
    assert_eq!(out.data["degree"], json!({"PLACED_WITH": 1, "TAGGED": 1}));
    assert_eq!(
        out.data["neighbors"],
        json!([
            {"element_id": "4:x:2", "labels": ["Supplier"], "label": "Supplier", "id": "SUP-001",
             "key": {"id": "SUP-001"}, "caption": "ACME Industrial", "distance": 1},
            // No key in the graph's constraints: its caption (its name) and element id.
            {"element_id": "4:x:3", "labels": ["Tag"], "caption": "urgent", "distance": 1}
        ])
    );
}

#[test]
fn performance_notifications_of_the_agents_query_become_hints_and_warnings_log_lines() {
    let graph = Graph {
        notifications: json!([
            {"code": "Neo.ClientNotification.Statement.CartesianProduct", "severity": "INFORMATION", "category": "PERFORMANCE",
             "title": "This query builds a cartesian product between disconnected patterns.",
             "description": "If a part of a query contains multiple disconnected patterns, this will build a cartesian product (identifier is: (`b`))",
             "position": {"offset": 0, "line": 1, "column": 1}},
            {"code": "Neo.ClientNotification.Statement.CartesianProduct", "severity": "INFORMATION", "category": "PERFORMANCE",
             "title": "This query builds a cartesian product between disconnected patterns.", "description": "again",
             "position": {"offset": 0, "line": 1, "column": 1}},
            {"code": "Neo.ClientNotification.Statement.FeatureDeprecationWarning", "severity": "WARNING", "category": "DEPRECATION",
             "title": "This feature is deprecated and will be removed in future versions.", "description": "d",
             "position": {"offset": 9, "line": 1, "column": 10}}
        ]),
        ..Graph::default()
    };
    let client = client_of(&graph);
    let session = Session::new();
    let query = "MATCH (a:Supplier), (b:PurchaseOrder) WHERE a.name = 'x' RETURN a.name, b.status";
    let result = call_in(
        &session,
        &client,
        &&graph,
        "run_read_cypher",
        &json!({"query": query}).to_string(),
    );
    let out = result.unwrap();
    assert_eq!(
        out.data["hints"],
        json!([{"code": "CartesianProduct", "hint": "This query builds a cartesian product between disconnected patterns.", "at": {"line": 1, "column": 1}}])
    );
    let noted = session.take_notifications();
    assert_eq!(noted.len(), 3);
    let lines: Vec<String> = noted
        .iter()
        .filter_map(|n| log_line("run_read_cypher", n))
        .collect();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains("severity=WARNING category=DEPRECATION code=Neo.ClientNotification.Statement.FeatureDeprecationWarning at=1:10"), "{}", lines[0]);
    // The agent's query text can hold values: it is not logged.
    assert!(!lines[0].contains("'x'") && lines[0].contains("<run_read_cypher input>"));
    assert!(session.take_notifications().is_empty());
    // The application's own statements: performance hints are logged, with the statement.
    let own = log_line("get_instances_by_class", &noted[0]).unwrap();
    assert!(
        own.contains("category=PERFORMANCE") && own.contains("statement=\"MATCH (a:Supplier)"),
        "{own}"
    );
    assert!(!own.contains('\n'));
}
