//! Graph round trips per agent turn (issue #15 item 10, issue #18): a turn with four tool
//! calls runs in one request, whose query-tools instance looks the schema up
//! (`db.relationshipTypes()`) at most once, and the label list not at all when every call
//! found instances of its class (which proves the label exists). Every statement the
//! application sends is counted by a TCP proxy between the application and devgraph. And
//! the graph's notifications (item 6): a performance hint about the agent's own query
//! reaches it.

use kg_e2e::llm_stub::{Reply, ScriptedLlm, text};
use kg_e2e::{AppHost, GRAPH_PASSWORD, Graph, app_manifest};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What each connection's client sent, one buffer per connection.
type Sent = Arc<Mutex<Vec<Arc<Mutex<Vec<u8>>>>>>;

/// Forwards TCP connections to `upstream` and keeps what the clients sent, one buffer per
/// connection.
struct CountingProxy {
    url: String,
    sent: Sent,
}

impl CountingProxy {
    async fn start(upstream: &str) -> CountingProxy {
        let upstream = upstream
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .to_string();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let sent: Sent = Arc::default();
        let log = sent.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let Ok(server) = TcpStream::connect(&upstream).await else {
                    continue;
                };
                let buffer: Arc<Mutex<Vec<u8>>> = Arc::default();
                log.lock().unwrap().push(buffer.clone());
                let (mut client_read, mut client_write) = client.into_split();
                let (mut server_read, mut server_write) = server.into_split();
                tokio::spawn(async move {
                    let mut chunk = vec![0u8; 64 * 1024];
                    loop {
                        match client_read.read(&mut chunk).await {
                            Ok(0) | Err(_) => break,
                            Ok(n) => {
                                buffer.lock().unwrap().extend_from_slice(&chunk[..n]);
                                if server_write.write_all(&chunk[..n]).await.is_err() {
                                    break;
                                }
                            }
                        }
                    }
                    let _ = server_write.shutdown().await;
                });
                tokio::spawn(async move {
                    let _ = tokio::io::copy(&mut server_read, &mut client_write).await;
                    let _ = client_write.shutdown().await;
                });
            }
        });
        CountingProxy { url, sent }
    }

    /// The statements sent since the last call, in order per connection. Each connection's
    /// buffer is drained, not dropped: the host keeps connections alive between requests
    /// (devhost pools them, as Spin does), so a later request may come on one of them.
    fn take_statements(&self) -> Vec<String> {
        let buffers: Vec<_> = self.sent.lock().unwrap().clone();
        let mut statements = Vec::new();
        for buffer in buffers {
            let bytes = std::mem::take(&mut *buffer.lock().unwrap());
            let marker = b"\"statement\":";
            let mut at = 0;
            while let Some(i) = bytes[at..].windows(marker.len()).position(|w| w == marker) {
                let start = at + i + marker.len();
                let mut values =
                    serde_json::Deserializer::from_slice(&bytes[start..]).into_iter::<String>();
                if let Some(Ok(statement)) = values.next() {
                    statements.push(statement);
                }
                at = start;
            }
        }
        statements
    }
}

fn is_schema(statement: &str) -> bool {
    [
        "db.labels()",
        "db.relationshipTypes()",
        "db.propertyKeys()",
        "db.schema.",
    ]
    .iter()
    .any(|s| statement.contains(s))
}

#[tokio::test]
async fn a_turn_with_four_tool_calls_looks_the_schema_up_once() {
    let graph = Graph::start().await.unwrap();
    let proxy = CountingProxy::start(&graph.url).await;
    let llm = ScriptedLlm::start().await;
    let calls: Vec<(String, Value)> = vec![
        (
            "search_instances".into(),
            json!({"search_term": "acme", "class_name": "Supplier"}),
        ),
        (
            "get_instances_by_class".into(),
            json!({"class_name": "Product", "limit": 5}),
        ),
        (
            "get_instance_neighbors".into(),
            json!({"instance": "PRD-036", "class_name": "Product", "direction": "in", "relationship_types": ["COMPONENT_OF"]}),
        ),
        (
            "get_instance_neighbors".into(),
            json!({"instance": "SUP-001", "class_name": "Supplier", "relationship_types": ["SUPPLIES"]}),
        ),
    ];
    llm.then([
        Reply::Tools(calls.clone()),
        text("Done: see the tool results."),
        text("Done: see the tool results."),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let mut variables = llm.variables();
    variables.push(("neo4j_origin", proxy.url.clone()));
    variables.push(("neo4j_password", GRAPH_PASSWORD.to_string()));
    let host = AppHost::start(&app_manifest(), &dir.path().join("kv.db"), &variables)
        .await
        .unwrap();

    proxy.take_statements();
    let (status, r) = host
        .send(
            "POST",
            "/chat",
            &json!({"message": "Which suppliers deliver parts used in product PRD-036?", "routing_mode": "rule", "trace": true})
                .to_string(),
        )
        .await
        .unwrap();
    assert_eq!(status, 200, "{r}");
    let steps = r["intermediate_steps"].as_array().unwrap();
    let results: Vec<&Value> = steps
        .iter()
        .filter(|s| s["type"] == "tool_result")
        .collect();
    assert_eq!(results.len(), 4, "{r}");
    assert!(results.iter().all(|s| s["success"] == true), "{r}");

    let statements = proxy.take_statements();
    let labels = statements
        .iter()
        .filter(|s| s.contains("db.labels()"))
        .count();
    let types = statements
        .iter()
        .filter(|s| s.contains("db.relationshipTypes()"))
        .count();
    let schema = statements.iter().filter(|s| is_schema(s)).count();
    eprintln!(
        "graph round trips for a turn with {} tool calls: {} statements, {schema} schema look-ups ({labels} db.labels(), {types} db.relationshipTypes())",
        calls.len(),
        statements.len()
    );
    assert_eq!(labels, 0, "{statements:#?}");
    assert_eq!(types, 1, "{statements:#?}");
    assert_eq!(schema, 1, "{statements:#?}");
    // The tools' own statements and the types' look-up, no more: the graph's constraints
    // once for the turn (the profile); search: the full-text index (missing here: no
    // set-up ran; the look-ups go with it in one statement, which fails with it), its
    // bounded scan and the exact key and caption look-up; the page of products; each
    // neighbours call: the instance by key, then its paths with its degree per type.
    let constraints = statements
        .iter()
        .filter(|s| s.starts_with("SHOW CONSTRAINTS"))
        .count();
    assert_eq!(constraints, 1, "{statements:#?}");
    assert_eq!(statements.len(), 10, "{statements:#?}");

    // The next request looks the schema up afresh (a new instance, a new session).
    let (status, _) = host
        .send(
            "POST",
            "/tools/get_instance_neighbors",
            &json!({"instance": "SUP-001", "relationship_types": ["SUPPLIES"]}).to_string(),
        )
        .await
        .unwrap();
    assert_eq!(status, 200);
    let statements = proxy.take_statements();
    assert_eq!(
        statements
            .iter()
            .filter(|s| s.contains("db.relationshipTypes()"))
            .count(),
        1,
        "{statements:#?}"
    );

    // A class with no such label: the statement finds nothing, then the label list is read
    // and the caller gets the not-found error with the close name, as before.
    let (status, r) = host
        .send(
            "POST",
            "/tools/get_instances_by_class",
            &json!({"class_name": "Suppliers"}).to_string(),
        )
        .await
        .unwrap();
    assert_eq!(status, 404, "{r}");
    assert!(r.to_string().contains("Supplier"), "{r}");
    let statements = proxy.take_statements();
    // (In order per connection only: the host may send a request's statements on
    // different pooled connections.) The profile's constraints come first: the page
    // follows the class's key.
    assert_eq!(statements.len(), 3, "{statements:#?}");
    assert!(
        statements.iter().any(|s| s.starts_with("CALL db.labels()")),
        "{statements:#?}"
    );

    // Cypher naming labels and a relationship type: both lists in one statement, then
    // the read-only plan check and the query.
    let (status, r) = host
        .send(
            "POST",
            "/tools/run_read_cypher",
            &json!({"query": "MATCH (s:Supplier)-[:SUPPLIES]->(p:Product) RETURN s.id, p.id LIMIT 3"})
                .to_string(),
        )
        .await
        .unwrap();
    assert_eq!(status, 200, "{r}");
    let statements = proxy.take_statements();
    assert_eq!(statements.len(), 3, "{statements:#?}");
    let both = |s: &&String| s.contains("db.labels()") && s.contains("db.relationshipTypes()");
    assert_eq!(statements.iter().filter(both).count(), 1, "{statements:#?}");
    assert_eq!(
        statements
            .iter()
            .filter(|s| s.starts_with("EXPLAIN "))
            .count(),
        1,
        "{statements:#?}"
    );
}

#[tokio::test]
async fn neighbours_carry_their_business_keys() {
    let graph = Graph::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let host = AppHost::start(
        &app_manifest(),
        &dir.path().join("kv.db"),
        &graph.variables(),
    )
    .await
    .unwrap();
    let (status, r) = host
        .send(
            "POST",
            "/tools/get_instance_neighbors",
            &json!({"instance": "PRD-036", "direction": "in", "relationship_types": ["COMPONENT_OF"]})
                .to_string(),
        )
        .await
        .unwrap();
    assert_eq!(status, 200, "{r}");
    let nodes = r["graph_data"]["nodes"].as_array().unwrap();
    let neighbors = r["data"]["neighbors"].as_array().unwrap();
    assert!(!neighbors.is_empty(), "{r}");
    for n in neighbors {
        // The key the agent acts on is the node's own `id`, beside its element id.
        let node = nodes
            .iter()
            .find(|g| g["id"] == n["element_id"])
            .unwrap_or_else(|| panic!("{n} not in the graph data"));
        assert_eq!(n["id"], node["properties"]["id"], "{n}");
        assert!(
            n["id"].as_str().is_some_and(|id| id.starts_with("PRD-")),
            "{n}"
        );
        assert_eq!(n["distance"], 1);
    }
}

/// A Neo4j stand-in that plans every query as a read, knows two labels, and answers the
/// query itself with the documented notification shape (a cartesian product).
struct NotifyingGraph;

impl wiremock::Respond for NotifyingGraph {
    fn respond(&self, request: &wiremock::Request) -> wiremock::ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or_default();
        let statement = body["statement"].as_str().unwrap_or_default();
        let answer = if statement.starts_with("EXPLAIN ") {
            json!({"data": {"fields": [], "values": []}, "queryType": "r"})
        } else if statement.contains("db.labels()") {
            json!({"data": {"fields": ["label"], "values": [["Product"], ["Supplier"]]}})
        } else {
            json!({
                "data": {"fields": ["a", "b"], "values": [["SUP-001", "PRD-001"]]},
                "notifications": [{
                    "code": "Neo.ClientNotification.Statement.CartesianProduct",
                    "title": "This query builds a cartesian product between disconnected patterns.",
                    "description": "If a part of a query contains multiple disconnected patterns, this will build a cartesian product between all those parts.",
                    "severity": "INFORMATION",
                    "position": {"offset": 0, "line": 1, "column": 1},
                    "category": "PERFORMANCE"
                }],
                "bookmarks": []
            })
        };
        wiremock::ResponseTemplate::new(200)
            .insert_header("content-type", "application/json")
            .set_body_json(answer)
    }
}

#[tokio::test]
async fn the_agent_gets_the_graphs_performance_hints_about_its_query() {
    let graph = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(NotifyingGraph)
        .mount(&graph)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let host = AppHost::start(
        &app_manifest(),
        &dir.path().join("kv.db"),
        &[
            ("neo4j_origin", graph.uri()),
            ("neo4j_password", GRAPH_PASSWORD.to_string()),
        ],
    )
    .await
    .unwrap();
    let (status, r) = host
        .send(
            "POST",
            "/tools/run_read_cypher",
            &json!({"query": "MATCH (a:Supplier), (b:Product) RETURN a.id AS a, b.id AS b"})
                .to_string(),
        )
        .await
        .unwrap();
    assert_eq!(status, 200, "{r}");
    assert_eq!(
        r["data"]["hints"],
        json!([{"code": "CartesianProduct", "hint": "This query builds a cartesian product between disconnected patterns.", "at": {"line": 1, "column": 1}}]),
        "{r}"
    );
}
