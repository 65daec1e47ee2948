//! devgraph through the Query API, driven by the product's own neo4j-client over real
//! HTTP: READ enforcement, transactions and rollback, auth, error codes, the demo data.

use devgraph::{demo, graph::Graph, http::Server};
use neo4j_client::*;
use serde_json::{Map, Value as Json, json};
use std::sync::Arc;

/// neo4j-client's transport over ureq (blocking), for tests.
struct Ureq(ureq::Agent);

impl Transport for Ureq {
    fn send(&self, request: HttpRequest) -> Result<HttpResponse, TransportError> {
        let mut builder = ureq::http::Request::builder()
            .method(match request.method {
                Method::Get => "GET",
                Method::Post => "POST",
                Method::Delete => "DELETE",
            })
            .uri(&request.url);
        for (k, v) in &request.headers {
            builder = builder.header(k, v);
        }
        let built = builder
            .body(request.body.unwrap_or_default())
            .map_err(other)?;
        let mut response = self.0.run(built).map_err(|e| TransportError {
            kind: TransportErrorKind::Connect,
            message: e.to_string(),
        })?;
        let status = response.status().as_u16();
        let headers = response
            .headers()
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or_default().to_string()))
            .collect();
        let body = response.body_mut().read_to_vec().map_err(other)?;
        Ok(HttpResponse {
            status,
            headers,
            body,
        })
    }
}

fn other(e: impl std::fmt::Display) -> TransportError {
    TransportError {
        kind: TransportErrorKind::Other,
        message: e.to_string(),
    }
}

/// Starts devgraph in-process on a free port, with or without the demo data.
fn start(with_demo: bool) -> String {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        runtime.block_on(async move {
            let db = grafeo::GrafeoDB::new_in_memory();
            if with_demo {
                demo::load(&db.session()).unwrap();
            }
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(format!("http://{}", listener.local_addr().unwrap()))
                .unwrap();
            let server = Arc::new(Server::new(Graph::new(db), "neo4j", "neo4j", "secret"));
            devgraph::serve(server, listener).await.unwrap();
        });
    });
    rx.recv().unwrap()
}

fn client(origin: &str, password: &str) -> Client<Ureq> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    Client::new(
        Config {
            origin: neo4j_client::Url::parse(origin).expect("a URL"),
            database: "neo4j".into(),
            auth: Auth::Basic {
                user: "neo4j".into(),
                password: password.into(),
            },
        },
        Ureq(agent),
    )
}

fn count(c: &Client<Ureq>, statement: &str) -> i64 {
    c.run(statement, Map::new(), AccessMode::Read).unwrap().rows[0][0]
        .as_i64()
        .unwrap()
}

fn params(v: Json) -> Map<String, Json> {
    v.as_object().cloned().unwrap()
}

#[test]
fn read_mode_refuses_writes_with_neo4js_code_and_writes_nothing() {
    let c = client(&start(false), "secret");
    for statement in [
        "CREATE (n:X)",
        "MERGE (n:X {id: 1})",
        "MATCH (n) SET n.x = 1",
        "MATCH (n) DETACH DELETE n",
    ] {
        let e = c.run(statement, Map::new(), AccessMode::Read).unwrap_err();
        assert_eq!(e.kind, ErrorKind::ReadOnlyViolation, "{statement}: {e}");
        assert_eq!(
            e.code.as_deref(),
            Some("Neo.ClientError.Statement.AccessMode")
        );
    }
    assert_eq!(count(&c, "MATCH (n) RETURN count(n) AS c"), 0);
    // The same statement is fine in WRITE mode, with counters.
    let r = c
        .run("CREATE (n:X {v: 1})", Map::new(), AccessMode::Write)
        .unwrap();
    let counters = r.counters.unwrap();
    assert!(counters.contains_updates);
    assert_eq!(counters.nodes_created, 1);
}

#[test]
fn rollback_discards_and_commit_keeps() {
    let c = client(&start(false), "secret");
    let tx = c.begin(AccessMode::Write).unwrap();
    c.run_in(&tx, "CREATE (n:Temp {k: $k})", params(json!({"k": 1})))
        .unwrap();
    c.rollback(tx).unwrap();
    assert_eq!(count(&c, "MATCH (n:Temp) RETURN count(n) AS c"), 0);

    let tx = c.begin(AccessMode::Write).unwrap();
    c.run_in(&tx, "CREATE (n:Temp {k: $k})", params(json!({"k": 2})))
        .unwrap();
    c.run_in(&tx, "CREATE (n:Temp {k: $k})", params(json!({"k": 3})))
        .unwrap();
    c.commit(tx).unwrap();
    assert_eq!(count(&c, "MATCH (n:Temp) RETURN count(n) AS c"), 2);

    // A finished transaction is gone.
    let tx = c.begin(AccessMode::Write).unwrap();
    let id = tx.clone();
    c.commit(tx).unwrap();
    let e = c.run_in(&id, "RETURN 1", Map::new()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::NotFound);
}

#[test]
fn a_read_transaction_refuses_writes() {
    let c = client(&start(false), "secret");
    let tx = c.begin(AccessMode::Read).unwrap();
    let e = c.run_in(&tx, "CREATE (n:X)", Map::new()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::ReadOnlyViolation);
}

#[test]
fn wrong_or_missing_credentials_are_401() {
    let origin = start(false);
    let e = client(&origin, "wrong")
        .run("RETURN 1", Map::new(), AccessMode::Read)
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Authentication);
    let anonymous = Client::new(
        Config {
            origin: neo4j_client::Url::parse(&origin).expect("a URL"),
            database: "neo4j".into(),
            auth: Auth::None,
        },
        Ureq(
            ureq::Agent::config_builder()
                .http_status_as_error(false)
                .build()
                .into(),
        ),
    );
    let e = anonymous
        .run("RETURN 1", Map::new(), AccessMode::Read)
        .unwrap_err();
    assert_eq!(
        e.code.as_deref(),
        Some("Neo.ClientError.Security.Unauthorized")
    );
}

#[test]
fn syntax_errors_and_unknown_databases_have_neo4j_codes() {
    let origin = start(false);
    let c = client(&origin, "secret");
    let e = c
        .run("MATC (n) RETURN n", Map::new(), AccessMode::Read)
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Syntax);
    let other = Client::new(
        Config {
            origin: neo4j_client::Url::parse(&origin).expect("a URL"),
            database: "nope".into(),
            auth: Auth::Basic {
                user: "neo4j".into(),
                password: "secret".into(),
            },
        },
        Ureq(
            ureq::Agent::config_builder()
                .http_status_as_error(false)
                .build()
                .into(),
        ),
    );
    let e = other
        .run("RETURN 1", Map::new(), AccessMode::Read)
        .unwrap_err();
    assert_eq!(
        e.code.as_deref(),
        Some("Neo.ClientError.Database.DatabaseNotFound")
    );
}

#[test]
fn parameters_labels_and_relationship_types() {
    let c = client(&start(true), "secret");
    let r = c
        .run(
            "MATCH (s:Supplier {id: $id}) RETURN s.name AS name",
            params(json!({"id": "SUP-001"})),
            AccessMode::Read,
        )
        .unwrap();
    assert_eq!(r.rows[0][0], Value::String("ACME Industrial".into()));
    let labels = c
        .run(
            "CALL db.labels() YIELD label RETURN label ORDER BY label",
            Map::new(),
            AccessMode::Read,
        )
        .unwrap();
    let labels: Vec<&str> = labels.rows.iter().filter_map(|r| r[0].as_str()).collect();
    assert!(
        labels.contains(&"PurchaseOrder") && labels.contains(&"OntologyClass"),
        "{labels:?}"
    );
    let types = c
        .run("CALL db.relationshipTypes()", Map::new(), AccessMode::Read)
        .unwrap();
    assert!(
        types
            .rows
            .iter()
            .any(|r| r[0].as_str() == Some("PLACED_WITH"))
    );
    // Typed JSON carries nodes with Neo4j-shaped element ids.
    let r = c
        .run(
            "MATCH (s:Supplier {id: 'SUP-007'}) RETURN s",
            Map::new(),
            AccessMode::Read,
        )
        .unwrap();
    let Value::Node {
        element_id,
        labels,
        properties,
    } = &r.rows[0][0]
    else {
        panic!("{:?}", r.rows)
    };
    assert!(element_id.starts_with("4:"));
    assert_eq!(labels, &["Supplier"]);
    assert_eq!(properties["blocked"], Value::Boolean(true));
}

#[test]
fn the_demo_dataset_has_the_promised_shape() {
    let c = client(&start(true), "secret");
    let by_status = c
        .run(
            "MATCH (o:PurchaseOrder)-[:PLACED_WITH]->(:Supplier {id: 'SUP-001'}) RETURN o.status AS status, count(*) AS n ORDER BY status",
            Map::new(),
            AccessMode::Read,
        )
        .unwrap();
    let by_status: Vec<(String, i64)> = by_status
        .rows
        .iter()
        .map(|r| (r[0].as_str().unwrap().to_string(), r[1].as_i64().unwrap()))
        .collect();
    assert_eq!(
        by_status,
        [
            ("approved".into(), 12),
            ("cancelled".into(), 3),
            ("draft".into(), 4),
            ("paid".into(), 5)
        ]
    );
    assert_eq!(
        by_status.iter().map(|(_, n)| n).sum::<i64>(),
        demo::ACME_ORDERS as i64
    );
    assert_eq!(
        count(&c, "MATCH (s:Supplier) RETURN count(s) AS c"),
        demo::SUPPLIERS as i64
    );
    assert_eq!(
        count(
            &c,
            "MATCH (s:Supplier {blocked: true}) RETURN count(s) AS c"
        ),
        1
    );
    assert_eq!(
        count(&c, "MATCH (p:Product) RETURN count(p) AS c"),
        demo::PRODUCTS as i64
    );
    assert!(count(&c, "MATCH (n) RETURN count(n) AS c") >= 500);
    // ACME's approved orders cost more than the account holds: paying all must run out.
    let r = c
        .run(
            "MATCH (o:PurchaseOrder {status: 'approved'})-[:PLACED_WITH]->(:Supplier {id: 'SUP-001'}) RETURN sum(o.amount) AS total",
            Map::new(),
            AccessMode::Read,
        )
        .unwrap();
    let Value::Float(total) = r.rows[0][0] else {
        panic!()
    };
    let r = c
        .run(
            "MATCH (a:Account {id: 'ACC-MAIN'}) RETURN a.balance AS b",
            Map::new(),
            AccessMode::Read,
        )
        .unwrap();
    let Value::Float(balance) = r.rows[0][0] else {
        panic!()
    };
    assert!(total > balance && balance > 0.0, "{total} vs {balance}");
    assert_eq!(count(&c, "MATCH (c:OntologyClass) RETURN count(c) AS c"), 7);
    assert_eq!(
        count(&c, "MATCH (r:OntologyRelationship) RETURN count(r) AS c"),
        9
    );
}

#[test]
fn file_persistence_keeps_committed_data_across_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("graph.grafeo");
    {
        let db = grafeo::GrafeoDB::open(&path).unwrap();
        let graph = Graph::new(db);
        let mut p = Map::new();
        p.insert("k".into(), json!(7));
        graph
            .run(
                "CREATE (n:Kept {k: $k})",
                &p,
                devgraph::graph::AccessMode::Write,
                devgraph::values::Format::Plain,
            )
            .unwrap();
        // Dropped without an explicit close(), as when devgraph is stopped with Ctrl-C.
        drop(graph);
    }
    let db = grafeo::GrafeoDB::open(&path).unwrap();
    let rows = db
        .session()
        .execute_cypher("MATCH (n:Kept) RETURN n.k AS k")
        .unwrap()
        .into_rows();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0][0], grafeo::Value::Int64(7));
}
