//! Contract tests against the Query API's documented request and response shapes.

use neo4j_client::*;
use serde_json::{Map, Value as Json, json};
use std::cell::RefCell;
use std::collections::VecDeque;

/// Records requests and replays canned responses.
#[derive(Default)]
struct Fake {
    requests: RefCell<Vec<HttpRequest>>,
    responses: RefCell<VecDeque<Result<HttpResponse, TransportError>>>,
}

impl Fake {
    fn answer(self, status: u16, content_type: &str, body: &str) -> Self {
        self.answer_with(
            status,
            vec![("content-type".into(), content_type.into())],
            body,
        )
    }

    fn answer_with(self, status: u16, headers: Vec<(String, String)>, body: &str) -> Self {
        self.responses.borrow_mut().push_back(Ok(HttpResponse {
            status,
            headers,
            body: body.as_bytes().to_vec(),
        }));
        self
    }

    fn fail(self, kind: TransportErrorKind) -> Self {
        self.responses.borrow_mut().push_back(Err(TransportError {
            kind,
            message: "no route".into(),
        }));
        self
    }
}

impl Transport for &Fake {
    fn send(&self, request: HttpRequest) -> Result<HttpResponse, TransportError> {
        self.requests.borrow_mut().push(request);
        self.responses
            .borrow_mut()
            .pop_front()
            .expect("a canned response")
    }
}

fn golden(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/tests/golden/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

fn client(fake: &Fake) -> Client<&Fake> {
    Client::new(
        Config {
            origin: neo4j_client::Url::parse("http://db.example:7474/").expect("a URL"),
            database: "neo4j".into(),
            auth: Auth::Basic {
                user: "neo4j".into(),
                password: "verysecret".into(),
            },
        },
        fake,
    )
}

fn params(v: Json) -> Map<String, Json> {
    v.as_object().cloned().unwrap()
}

const PLAIN: &str = "application/json";
const TYPED: &str = "application/vnd.neo4j.query";

#[test]
fn auto_commit_request_has_the_documented_shape() {
    let fake = Fake::default().answer(202, PLAIN, &golden("run_plain.json"));
    client(&fake)
        .run(
            "MATCH (p:Person {name: $name}) RETURN p",
            params(json!({"name": "Phil"})),
            AccessMode::Read,
        )
        .unwrap();
    let requests = fake.requests.borrow();
    let r = &requests[0];
    assert_eq!(r.method, Method::Post);
    assert_eq!(r.url, "http://db.example:7474/db/neo4j/query/v2");
    // base64("neo4j:verysecret"), the documentation's own example.
    assert_eq!(
        r.header("authorization"),
        Some("Basic bmVvNGo6dmVyeXNlY3JldA==")
    );
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert!(
        r.header("accept")
            .unwrap()
            .contains("application/vnd.neo4j.query")
    );
    let body: Json = serde_json::from_slice(r.body.as_ref().unwrap()).unwrap();
    assert_eq!(
        body,
        json!({"statement": "MATCH (p:Person {name: $name}) RETURN p", "parameters": {"name": "Phil"}, "accessMode": "READ"})
    );
}

#[test]
fn only_a_write_asks_for_counters() {
    // A READ transaction cannot write: its counters would all be zero, so a read leaves
    // `includeCounters` out (the answer is shorter); a write asks for them.
    let fake = Fake::default()
        .answer(202, PLAIN, &golden("run_plain.json"))
        .answer(202, PLAIN, &golden("run_plain.json"));
    let c = client(&fake);
    c.run("MATCH (n) RETURN n", Map::new(), AccessMode::Read)
        .unwrap();
    c.run("CREATE (n:X)", Map::new(), AccessMode::Write)
        .unwrap();
    let requests = fake.requests.borrow();
    let body =
        |i: usize| -> Json { serde_json::from_slice(requests[i].body.as_ref().unwrap()).unwrap() };
    assert_eq!(body(0).get("includeCounters"), None, "{}", body(0));
    assert_eq!(body(1)["includeCounters"], true, "{}", body(1));
    assert_eq!(body(1)["accessMode"], "WRITE");
}

#[test]
fn plain_results_decode_nodes_relationships_paths_counters_and_bookmarks() {
    let fake = Fake::default().answer(202, PLAIN, &golden("run_plain.json"));
    let result = client(&fake)
        .run("…", Map::new(), AccessMode::Write)
        .unwrap();
    assert_eq!(result.fields, ["person", "name", "knows", "path"]);
    let row = &result.rows[0];
    let Value::Node {
        element_id,
        labels,
        properties,
    } = &row[0]
    else {
        panic!("{:?}", row[0])
    };
    assert_eq!(
        (element_id.as_str(), labels.as_slice()),
        ("4:ff04df25:2", &["Person".to_string()][..])
    );
    assert_eq!(properties["age"], Value::Integer(41));
    assert_eq!(row[1], Value::String("Phil".into()));
    let Value::Relationship {
        rel_type,
        start_node_element_id,
        ..
    } = &row[2]
    else {
        panic!()
    };
    assert_eq!(
        (rel_type.as_str(), start_node_element_id.as_str()),
        ("KNOWS", "4:ff04df25:2")
    );
    let Value::Path {
        nodes,
        relationships,
    } = &row[3]
    else {
        panic!("{:?}", row[3])
    };
    assert_eq!((nodes.len(), relationships.len()), (2, 1));
    let counters = result.counters.clone().unwrap();
    assert!(counters.contains_updates);
    assert_eq!(
        (
            counters.nodes_created,
            counters.properties_set,
            counters.labels_added
        ),
        (1, 2, 1)
    );
    assert_eq!(result.bookmarks, ["FB:kcwQ/wTfJf8rS1WY+GiIKXsCXg6Q"]);
    assert_eq!(
        result.rows_as_maps()[0]["name"],
        Value::String("Phil".into())
    );
}

#[test]
fn typed_results_decode_every_documented_type() {
    let fake = Fake::default().answer(202, TYPED, &golden("run_typed.json"));
    let result = client(&fake)
        .run("…", Map::new(), AccessMode::Read)
        .unwrap();
    let row = &result.rows[0];
    let Value::Node {
        properties, labels, ..
    } = &row[0]
    else {
        panic!()
    };
    assert_eq!(labels, &["Supplier"]);
    assert_eq!(properties["orders"], Value::Integer(24));
    assert_eq!(
        row[1],
        Value::Integer(9_007_199_254_740_993),
        "integers beyond 2^53 stay exact"
    );
    assert_eq!(row[2], Value::Float(1.5));
    assert_eq!(row[3], Value::String("text".into()));
    assert_eq!(row[4], Value::Boolean(true));
    assert_eq!(row[5], Value::Bytes(vec![1, 2, 3]));
    assert_eq!(
        row[6],
        Value::List(vec![Value::Integer(1), Value::String("two".into())])
    );
    assert_eq!(row[7].to_plain_json(), json!({"k": false}));
    let temporal: Vec<(&str, &str)> = row[8..16]
        .iter()
        .map(|v| match v {
            Value::Temporal { type_name, iso } => (type_name.as_str(), iso.as_str()),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(temporal[0], ("Date", "2024-01-02"));
    assert_eq!(
        temporal[6],
        (
            "ZonedDateTime",
            "2015-11-21T21:40:32.142+01:00[Europe/Berlin]"
        )
    );
    assert_eq!(temporal[7], ("Duration", "P14DT16H12M"));
    assert_eq!(row[16], Value::Point("SRID=4326;POINT (1.2 3.4)".into()));
    let Value::Relationship {
        rel_type,
        end_node_element_id,
        ..
    } = &row[17]
    else {
        panic!()
    };
    assert_eq!(
        (rel_type.as_str(), end_node_element_id.as_str()),
        ("SUPPLIES", "4:abc:9")
    );
    let Value::Path {
        nodes,
        relationships,
    } = &row[18]
    else {
        panic!()
    };
    assert_eq!((nodes.len(), relationships.len()), (2, 1));
    assert_eq!(row[19], Value::Null);
}

#[test]
fn explicit_transactions_follow_the_documented_flow_with_affinity() {
    let affinity = vec![
        ("content-type".to_string(), PLAIN.to_string()),
        ("neo4j-cluster-affinity".to_string(), "MjAyMy0x".to_string()),
    ];
    let fake = Fake::default()
        .answer_with(202, affinity, &golden("begin.json"))
        .answer(202, PLAIN, &golden("run_plain.json"))
        .answer(
            202,
            PLAIN,
            r#"{"data": {"fields": [], "values": []}, "bookmarks": ["b2"]}"#,
        )
        .answer_with(202, vec![], &golden("begin.json"))
        .answer(200, PLAIN, "");
    let c = client(&fake);
    let tx = c.begin(AccessMode::Write).unwrap();
    assert_eq!(tx.id, "d8a9f3c0-tx");
    assert_eq!(tx.expires.as_deref(), Some("2024-10-22T15:48:29Z"));
    c.run_in(&tx, "CREATE (n:X)", Map::new()).unwrap();
    assert_eq!(c.commit(tx).unwrap().bookmarks, ["b2"]);
    let tx = c.begin(AccessMode::Read).unwrap();
    c.rollback(tx).unwrap();

    let requests = fake.requests.borrow();
    let base = "http://db.example:7474/db/neo4j/query/v2";
    let shape: Vec<(Method, &str)> = requests
        .iter()
        .map(|r| (r.method, r.url.as_str()))
        .collect();
    assert_eq!(
        shape,
        [
            (Method::Post, format!("{base}/tx").as_str()),
            (Method::Post, format!("{base}/tx/d8a9f3c0-tx").as_str()),
            (
                Method::Post,
                format!("{base}/tx/d8a9f3c0-tx/commit").as_str()
            ),
            (Method::Post, format!("{base}/tx").as_str()),
            (Method::Delete, format!("{base}/tx/d8a9f3c0-tx").as_str()),
        ]
    );
    let begin: Json = serde_json::from_slice(requests[0].body.as_ref().unwrap()).unwrap();
    assert_eq!(begin["accessMode"], "WRITE");
    assert_eq!(requests[0].header("neo4j-cluster-affinity"), None);
    assert_eq!(
        requests[1].header("neo4j-cluster-affinity"),
        Some("MjAyMy0x")
    );
    assert_eq!(
        requests[2].header("neo4j-cluster-affinity"),
        Some("MjAyMy0x")
    );
    assert_eq!(requests[4].body, None);
}

#[test]
fn every_error_class_is_typed_with_its_retryability() {
    let cases: Vec<(u16, String, ErrorKind, bool)> = vec![
        (400, golden("error_syntax.json"), ErrorKind::Syntax, false),
        (
            400,
            golden("error_access_mode.json"),
            ErrorKind::ReadOnlyViolation,
            false,
        ),
        (
            401,
            golden("error_unauthorized.json"),
            ErrorKind::Authentication,
            false,
        ),
        (401, String::new(), ErrorKind::Authentication, false),
        (403, String::new(), ErrorKind::Forbidden, false),
        (
            404,
            golden("error_tx_not_found.json"),
            ErrorKind::NotFound,
            false,
        ),
        (
            404,
            golden("error_tx_expired.json"),
            ErrorKind::NotFound,
            false,
        ),
        (
            400,
            golden("error_deadlock.json"),
            ErrorKind::Transient,
            true,
        ),
        (
            500,
            golden("error_database.json"),
            ErrorKind::Database,
            false,
        ),
        (
            502,
            "<html>Bad Gateway</html>".into(),
            ErrorKind::Unavailable,
            true,
        ),
        (503, String::new(), ErrorKind::Unavailable, true),
        (504, String::new(), ErrorKind::Timeout, true),
        (202, "not json".into(), ErrorKind::Protocol, false),
    ];
    for (status, body, kind, retryable) in cases {
        let fake = Fake::default().answer(status, PLAIN, &body);
        let e = client(&fake)
            .run("RETURN 1", Map::new(), AccessMode::Read)
            .unwrap_err();
        assert_eq!(
            (e.kind, e.is_retryable()),
            (kind, retryable),
            "{status} {body}: {e}"
        );
    }
    let e = client(&Fake::default().answer(400, PLAIN, &golden("error_syntax.json")))
        .run("MATC", Map::new(), AccessMode::Read)
        .unwrap_err();
    assert_eq!(
        e.code.as_deref(),
        Some("Neo.ClientError.Statement.SyntaxError")
    );
    assert!(e.to_string().contains("Invalid input"));
}

#[test]
fn transport_failures_become_unavailable_timeout_or_denied() {
    for (kind, expected) in [
        (TransportErrorKind::Connect, ErrorKind::Unavailable),
        (TransportErrorKind::Timeout, ErrorKind::Timeout),
        (TransportErrorKind::Denied, ErrorKind::Denied),
    ] {
        let fake = Fake::default().fail(kind);
        let e = client(&fake)
            .run("RETURN 1", Map::new(), AccessMode::Read)
            .unwrap_err();
        assert_eq!(e.kind, expected);
    }
}

#[test]
fn a_read_whose_connection_closed_is_sent_once_more_and_a_write_is_not() {
    let fake = Fake::default().fail(TransportErrorKind::Other).answer(
        202,
        PLAIN,
        &golden("run_plain.json"),
    );
    let result = client(&fake).run("RETURN 1 AS n", Map::new(), AccessMode::Read);
    assert!(result.is_ok(), "{result:?}");
    assert_eq!(fake.requests.borrow().len(), 2);
    // Twice in a row: the second failure is the answer.
    let fake = Fake::default()
        .fail(TransportErrorKind::Other)
        .fail(TransportErrorKind::Other);
    let e = client(&fake)
        .run("RETURN 1", Map::new(), AccessMode::Read)
        .unwrap_err();
    assert_eq!(
        (e.kind, fake.requests.borrow().len()),
        (ErrorKind::Unavailable, 2)
    );
    // A write may have committed before its connection closed: not re-sent.
    let fake = Fake::default().fail(TransportErrorKind::Other);
    let e = client(&fake)
        .run("CREATE (:X)", Map::new(), AccessMode::Write)
        .unwrap_err();
    assert_eq!(
        (e.kind, fake.requests.borrow().len()),
        (ErrorKind::Unavailable, 1)
    );
    // Refused, timed out, denied: answered at once, as before.
    for kind in [
        TransportErrorKind::Connect,
        TransportErrorKind::Timeout,
        TransportErrorKind::Denied,
    ] {
        let fake = Fake::default().fail(kind);
        let _ = client(&fake).run("RETURN 1", Map::new(), AccessMode::Read);
        assert_eq!(fake.requests.borrow().len(), 1, "{kind:?}");
    }
}

#[test]
fn bearer_auth_odd_database_names_and_secret_free_debug() {
    let config = Config {
        origin: neo4j_client::Url::parse("https://x.databases.neo4j.io").expect("a URL"),
        database: "my db/1".into(),
        auth: Auth::Bearer("tok".into()),
    };
    assert_eq!(
        config.query_url(),
        "https://x.databases.neo4j.io/db/my%20db%2F1/query/v2"
    );
    assert_eq!(config.auth.header().as_deref(), Some("Bearer tok"));
    let basic = Auth::Basic {
        user: "u".into(),
        password: "hunter2".into(),
    };
    assert!(!format!("{basic:?} {config:?}").contains("hunter2"));
    assert!(!format!("{config:?}").contains("tok\""));
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    fn json_value() -> impl Strategy<Value = Json> {
        let leaf = prop_oneof![
            Just(Json::Null),
            any::<bool>().prop_map(Json::Bool),
            any::<i64>().prop_map(Json::from),
            ".{0,8}".prop_map(Json::String),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Json::Array),
                prop::collection::btree_map("[$_a-z]{1,8}", inner, 0..4)
                    .prop_map(|m| Json::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn decoding_never_panics(v in json_value()) {
            let _ = decode_plain(&v).to_plain_json();
            let _ = decode_typed(&v).to_plain_json();
        }

        #[test]
        fn typed_integers_round_trip(i in any::<i64>()) {
            let v = json!({"$type": "Integer", "_value": i.to_string()});
            prop_assert_eq!(decode_typed(&v), Value::Integer(i));
        }

        #[test]
        fn database_names_are_always_one_path_segment(name in ".{1,12}") {
            let c = Config { origin: neo4j_client::Url::parse("http://h").expect("a URL"), database: name, auth: Auth::None };
            let url = c.query_url();
            let segment = url.strip_prefix("http://h/db/").unwrap().strip_suffix("/query/v2").unwrap();
            prop_assert!(!segment.contains('/') && !segment.contains(' ') && !segment.contains('?'));
        }
    }
}

/// Issue #14: a time limit on every statement (the Query API's `maxExecutionTime`, in
/// seconds), sent once set; a server that does not know the field gets the statement
/// again without it.
#[test]
fn max_execution_time_is_sent_and_dropped_for_a_server_without_it() {
    let fake = Fake::default()
        .answer(202, "application/json", r#"{"data": {"fields": ["x"], "values": [[1]]}}"#)
        .answer(
            400,
            "application/json",
            r#"{"errors": [{"code": "Neo.ClientError.Request.Invalid", "message": "Unrecognized field \"maxExecutionTime\""}]}"#,
        )
        .answer(202, "application/json", r#"{"data": {"fields": ["x"], "values": [[2]]}}"#)
        .answer(202, "application/json", r#"{"data": {"fields": ["x"], "values": [[3]]}}"#);
    let c = client(&fake).with_max_execution_time(Some(std::time::Duration::from_millis(9_500)));
    assert_eq!(c.max_execution_time(), Some(9));
    let r = c
        .run("RETURN 1 AS x", Map::new(), AccessMode::Read)
        .unwrap();
    assert_eq!(r.rows[0][0], Value::Integer(1));
    let r = c
        .run("RETURN 2 AS x", Map::new(), AccessMode::Read)
        .unwrap();
    assert_eq!(r.rows[0][0], Value::Integer(2));
    c.run("RETURN 3 AS x", Map::new(), AccessMode::Read)
        .unwrap();
    let bodies: Vec<Json> = fake
        .requests
        .borrow()
        .iter()
        .map(|r| serde_json::from_slice(r.body.as_ref().unwrap()).unwrap())
        .collect();
    assert_eq!(bodies[0]["maxExecutionTime"], json!(9));
    assert_eq!(bodies[1]["maxExecutionTime"], json!(9));
    assert!(bodies[2].get("maxExecutionTime").is_none(), "{}", bodies[2]);
    assert!(
        bodies[3].get("maxExecutionTime").is_none(),
        "remembered: {}",
        bodies[3]
    );
    // Without it set, nothing is sent; at least one second is asked.
    let fake = Fake::default().answer(
        202,
        "application/json",
        r#"{"data": {"fields": [], "values": []}}"#,
    );
    client(&fake)
        .run("RETURN 1", Map::new(), AccessMode::Read)
        .unwrap();
    let body: Json =
        serde_json::from_slice(fake.requests.borrow()[0].body.as_ref().unwrap()).unwrap();
    assert!(body.get("maxExecutionTime").is_none());
    assert_eq!(
        client(&fake)
            .with_max_execution_time(Some(std::time::Duration::from_millis(200)))
            .max_execution_time(),
        Some(1)
    );
}

/// Neo4j 5.26 enforces `maxExecutionTime` only on a transaction begun with it (observed):
/// a bounded READ begins one with its statement, then rolls it back (echoing the affinity);
/// a bounded WRITE commits it; an error answer ends it on the server, so nothing follows;
/// without a limit it is a plain auto-commit request.
#[test]
fn a_bounded_statement_begins_a_transaction_with_its_limit_and_closes_it() {
    let begun = r#"{"data": {"fields": ["x"], "values": [[1]]}, "transaction": {"id": "ab12", "expires": "2026-11-27T00:00:00Z"}}"#;
    let fake = Fake::default()
        .answer_with(
            202,
            vec![
                ("content-type".into(), PLAIN.into()),
                ("neo4j-cluster-affinity".into(), "MS1".into()),
            ],
            begun,
        )
        .answer(200, PLAIN, "{}");
    let c = client(&fake).with_max_execution_time(Some(std::time::Duration::from_secs(7)));
    let r = c
        .run_bounded("RETURN 1 AS x", Map::new(), AccessMode::Read)
        .unwrap();
    assert_eq!(r.rows[0][0], Value::Integer(1));
    {
        let requests = fake.requests.borrow();
        assert_eq!(requests.len(), 2);
        assert_eq!(requests[0].method, Method::Post);
        assert_eq!(
            requests[0].url,
            "http://db.example:7474/db/neo4j/query/v2/tx"
        );
        let body = body_of(&requests[0]);
        assert_eq!(body["statement"], "RETURN 1 AS x");
        assert_eq!(body["maxExecutionTime"], json!(7));
        assert_eq!(body["accessMode"], "READ");
        assert_eq!(requests[1].method, Method::Delete);
        assert_eq!(
            requests[1].url,
            "http://db.example:7474/db/neo4j/query/v2/tx/ab12"
        );
        assert!(
            requests[1]
                .headers
                .contains(&("neo4j-cluster-affinity".to_string(), "MS1".to_string()))
        );
    }

    let fake = Fake::default().answer(202, PLAIN, begun).answer(
        202,
        PLAIN,
        r#"{"data": {"fields": [], "values": []}, "bookmarks": ["B7"]}"#,
    );
    let c = client(&fake).with_max_execution_time(Some(std::time::Duration::from_secs(7)));
    let r = c
        .run_bounded("CREATE (n) RETURN 1 AS x", Map::new(), AccessMode::Write)
        .unwrap();
    assert_eq!(r.bookmarks, vec!["B7".to_string()]);
    assert_eq!(
        fake.requests.borrow()[1].url,
        "http://db.example:7474/db/neo4j/query/v2/tx/ab12/commit"
    );

    let fake = Fake::default().answer(
        400,
        PLAIN,
        r#"{"errors": [{"code": "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration", "message": "terminated"}]}"#,
    );
    let c = client(&fake).with_max_execution_time(Some(std::time::Duration::from_secs(1)));
    let e = c
        .run_bounded(
            "MATCH (a), (b) RETURN count(*)",
            Map::new(),
            AccessMode::Read,
        )
        .unwrap_err();
    assert!(e.is_too_expensive(), "{e:?}");
    assert_eq!(fake.requests.borrow().len(), 1, "nothing to close");

    let fake = Fake::default().answer(202, PLAIN, r#"{"data": {"fields": [], "values": []}}"#);
    client(&fake)
        .run_bounded("RETURN 1", Map::new(), AccessMode::Read)
        .unwrap();
    assert_eq!(
        fake.requests.borrow()[0].url,
        "http://db.example:7474/db/neo4j/query/v2"
    );
}

/// Issue #14: a statement stopped for its time or memory is the request's fault: typed
/// as too expensive and never retried (Neo4j files the memory pool error as transient).
#[test]
fn time_and_memory_limits_are_too_expensive_and_not_retryable() {
    for code in TOO_EXPENSIVE {
        let body = json!({"errors": [{"code": code, "message": "limit"}]}).to_string();
        let fake = Fake::default().answer(400, "application/json", &body);
        let e = client(&fake)
            .run("RETURN 1", Map::new(), AccessMode::Read)
            .unwrap_err();
        assert!(e.is_too_expensive(), "{code}");
        assert!(!e.is_retryable(), "{code}");
        assert_eq!(e.kind, ErrorKind::Client, "{code}");
    }
    assert!(
        !Neo4jError::from_code("Neo.TransientError.Transaction.DeadlockDetected", "x")
            .is_too_expensive()
    );
}

/// A schema command that lost the `IF NOT EXISTS` race to a concurrent one is run again
/// and answers like the no-op it is; any other refusal is returned after one attempt.
#[test]
fn a_schema_command_that_lost_the_creation_race_is_run_again() {
    let ddl = "CREATE INDEX i IF NOT EXISTS FOR (n:A) ON (n.id)";
    for code in SCHEMA_ALREADY_EXISTS {
        let race =
            json!({"errors": [{"code": code, "message": "An equivalent index already exists"}]});
        let fake = Fake::default()
            .answer(400, PLAIN, &race.to_string())
            .answer(202, PLAIN, &golden("run_plain.json"));
        client(&fake)
            .run_schema(ddl)
            .expect("the second attempt's answer");
        let requests = fake.requests.borrow();
        assert_eq!(requests.len(), 2, "{code}");
        assert_eq!(body_of(&requests[1])["statement"], ddl);
        assert_eq!(body_of(&requests[1])["accessMode"], "WRITE");
    }

    // The race twice in a row is not a race any more: the second refusal is the answer.
    let race = json!({"errors": [{"code": SCHEMA_ALREADY_EXISTS[0], "message": "exists"}]});
    let fake = Fake::default()
        .answer(400, PLAIN, &race.to_string())
        .answer(400, PLAIN, &race.to_string());
    let e = client(&fake).run_schema(ddl).unwrap_err();
    assert!(e.is_schema_creation_race());
    assert_eq!(fake.requests.borrow().len(), 2);

    // Data that breaks a new constraint is no race: one attempt.
    let broken = json!({"errors": [{"code": "Neo.ClientError.Schema.ConstraintCreationFailed", "message": "duplicates"}]});
    let fake = Fake::default().answer(400, PLAIN, &broken.to_string());
    let e = client(&fake).run_schema(ddl).unwrap_err();
    assert!(e.is_constraint_violation() && !e.is_schema_creation_race());
    assert_eq!(fake.requests.borrow().len(), 1);
}

/// `PROFILE` answers carry the measured plan.
#[test]
fn a_profiled_plan_is_kept() {
    let fake = Fake::default().answer(
        202,
        "application/json",
        r#"{"data": {"fields": ["n"], "values": [[1]]}, "profiledQueryPlan": {"operatorType": "ProduceResults@neo4j", "records": 1, "children": []}}"#,
    );
    let r = client(&fake)
        .run("PROFILE RETURN 1 AS n", Map::new(), AccessMode::Read)
        .unwrap();
    assert_eq!(r.profile.unwrap()["records"], 1);
}

fn body_of(request: &HttpRequest) -> Json {
    serde_json::from_slice(request.body.as_deref().unwrap_or(b"{}")).unwrap()
}

#[test]
fn a_bookmark_chain_makes_each_request_wait_for_the_answers_before_it() {
    let fake = Fake::default()
        .answer(
            202,
            PLAIN,
            r#"{"data": {"fields": [], "values": []}, "bookmarks": ["w1"]}"#,
        )
        .answer(
            202,
            PLAIN,
            r#"{"data": {"fields": [], "values": []}, "bookmarks": ["r1"]}"#,
        )
        .answer_with(202, vec![], &golden("begin.json"))
        .answer(
            202,
            PLAIN,
            r#"{"data": {"fields": [], "values": []}, "bookmarks": ["w2"]}"#,
        )
        .answer(202, PLAIN, r#"{"data": {"fields": [], "values": []}}"#);
    let chain = Bookmarks::new(vec!["b0".into()]);
    let c = client(&fake).with_bookmarks(chain.clone());
    c.run("CREATE (n:X)", Map::new(), AccessMode::Write)
        .unwrap();
    c.run("MATCH (n:X) RETURN n", Map::new(), AccessMode::Read)
        .unwrap();
    let tx = c.begin(AccessMode::Write).unwrap();
    assert_eq!(c.commit(tx).unwrap().bookmarks, ["w2"]);
    // A server that sends no bookmarks leaves the chain as it was.
    c.run("RETURN 1", Map::new(), AccessMode::Read).unwrap();
    assert_eq!(chain.current(), ["w2"]);

    let requests = fake.requests.borrow();
    let sent: Vec<Json> = requests
        .iter()
        .map(|r| body_of(r).get("bookmarks").cloned().unwrap_or(Json::Null))
        .collect();
    assert_eq!(
        sent,
        [
            json!(["b0"]),
            json!(["w1"]),
            json!(["r1"]),
            Json::Null, // the commit request carries no body fields: begin sent them
            json!(["w2"]),
        ]
    );
}

#[test]
fn without_a_chain_no_bookmarks_are_sent() {
    let fake = Fake::default().answer(
        202,
        PLAIN,
        r#"{"data": {"fields": [], "values": []}, "bookmarks": ["w1"]}"#,
    );
    let c = client(&fake);
    c.run("RETURN 1", Map::new(), AccessMode::Read).unwrap();
    assert!(
        body_of(&fake.requests.borrow()[0])
            .get("bookmarks")
            .is_none()
    );
}

#[test]
fn concurrent_runs_keep_every_answer_until_a_later_request_supersedes_them() {
    let answer = |b: &str| HttpResponse {
        status: 202,
        headers: vec![("content-type".into(), PLAIN.into())],
        body: format!(r#"{{"data": {{"fields": [], "values": []}}, "bookmarks": ["{b}"]}}"#)
            .into_bytes(),
    };
    let fake = Fake::default();
    let chain = Bookmarks::default();
    let c = client(&fake).with_bookmarks(chain.clone());
    let (_, sent_a) = c.prepare_run("CREATE (:A)", Map::new(), AccessMode::Write);
    let (_, sent_b) = c.prepare_run("CREATE (:B)", Map::new(), AccessMode::Write);
    c.finish_run(&sent_b, &answer("wb")).unwrap();
    c.finish_run(&sent_a, &answer("wa")).unwrap();
    assert_eq!(chain.current(), ["wb", "wa"]);
    let (request, sent) = c.prepare_run("MATCH (n) RETURN n", Map::new(), AccessMode::Read);
    assert_eq!(body_of(&request)["bookmarks"], json!(["wb", "wa"]));
    c.finish_run(&sent, &answer("r")).unwrap();
    assert_eq!(chain.current(), ["r"]);
}
