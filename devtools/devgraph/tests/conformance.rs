//! Issue #15: devgraph against the Neo4j Query API's documented requests and answers
//! (neo4j.com/docs/query-api: query, transactions, bookmarks, result formats) and Neo4j's
//! own Query API server (`QueryController`): status codes, fields, error codes.

mod common;

use common::Devgraph;
use serde_json::{Value as Json, json};
use std::time::Duration;

const AUTH: &str = "Basic bmVvNGo6ZGV2Z3JhcGg="; // neo4j:devgraph
const TYPED: &str = "application/vnd.neo4j.query";

struct Answer {
    status: u16,
    affinity: Option<String>,
    body: Json,
}

impl Devgraph {
    fn send(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<Json>,
    ) -> Answer {
        let agent = ureq::Agent::new_with_config(
            ureq::Agent::config_builder()
                .http_status_as_error(false)
                .timeout_global(Some(Duration::from_secs(30)))
                .build(),
        );
        let mut builder = ureq::http::Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base))
            .header("authorization", AUTH);
        for (k, v) in headers {
            builder = builder.header(*k, *v);
        }
        let request = builder
            .body(body.map(|b| b.to_string()).unwrap_or_default())
            .unwrap();
        let mut response = agent.run(request).unwrap();
        let status = response.status().as_u16();
        let affinity = response
            .headers()
            .get("neo4j-cluster-affinity")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let text = response.body_mut().read_to_string().unwrap();
        Answer {
            status,
            affinity,
            body: if text.is_empty() {
                Json::Null
            } else {
                serde_json::from_str(&text).unwrap_or(Json::String(text))
            },
        }
    }

    fn post(&self, path: &str, body: Json) -> Answer {
        self.send(
            "POST",
            path,
            &[("content-type", "application/json")],
            Some(body),
        )
    }

    fn query(&self, body: Json) -> Answer {
        self.post("", body)
    }

    fn typed(&self, body: Json) -> Answer {
        self.send(
            "POST",
            "",
            &[("content-type", TYPED), ("accept", TYPED)],
            Some(body),
        )
    }
}

fn code(a: &Answer) -> &str {
    a.body["errors"][0]["code"].as_str().unwrap_or("")
}

#[test]
fn db_ping_answers_success() {
    let g = Devgraph::start(&[]);
    let a = g.query(json!({"statement": "CALL db.ping()"}));
    assert_eq!(a.status, 202, "{}", a.body);
    assert_eq!(a.body["data"]["fields"], json!(["success"]));
    assert_eq!(a.body["data"]["values"], json!([[true]]));
    let a = g.typed(json!({"statement": "CALL db.ping() YIELD success RETURN success"}));
    assert_eq!(
        a.body["data"]["values"][0][0],
        json!({"$type": "Boolean", "_value": true})
    );
}

#[test]
fn division_by_zero_is_a_client_arithmetic_error() {
    let g = Devgraph::start(&[]);
    let a = g.query(json!({"statement": "RETURN 1 / 0 AS x"}));
    assert_eq!(a.status, 400, "{}", a.body);
    assert_eq!(code(&a), "Neo.ClientError.Statement.ArithmeticError");
    let a = g.query(json!({"statement": "UNWIND [1, 0] AS d RETURN 10 / d"}));
    assert_eq!(code(&a), "Neo.ClientError.Statement.ArithmeticError");
}

#[test]
fn typed_parameters_are_decoded_and_malformed_ones_refused() {
    let g = Devgraph::start(&[]);
    let t = |ty: &str, v: Json| json!({"$type": ty, "_value": v});
    // The documentation's example: a typed String parameter.
    let a = g.typed(json!({
        "statement": "MERGE (p:Person {name: $name}) RETURN p AS person, p.name AS name",
        "parameters": {"name": t("String", json!("Phil"))},
    }));
    assert_eq!(a.status, 202, "{}", a.body);
    assert_eq!(a.body["data"]["values"][0][1], t("String", json!("Phil")));
    let cases = [
        (t("Null", Json::Null), t("Null", Json::Null)),
        (t("Boolean", json!(true)), t("Boolean", json!(true))),
        (t("Integer", json!("42")), t("Integer", json!("42"))),
        (t("Float", json!("2.5")), t("Float", json!("2.5"))),
        (t("String", json!("x")), t("String", json!("x"))),
        (t("Base64", json!("AQID")), t("Base64", json!("AQID"))),
        (
            t("Date", json!("2024-01-31")),
            t("Date", json!("2024-01-31")),
        ),
        (
            t("Time", json!("12:50:35+01:00")),
            t("Time", json!("12:50:35+01:00")),
        ),
        (
            t("LocalTime", json!("12:50:35")),
            t("LocalTime", json!("12:50:35")),
        ),
        (
            t("LocalDateTime", json!("2015-07-04T19:32:24")),
            t("LocalDateTime", json!("2015-07-04T19:32:24")),
        ),
        (
            t("OffsetDateTime", json!("2024-01-01T21:40:32-01:00")),
            t("OffsetDateTime", json!("2024-01-01T21:40:32-01:00")),
        ),
        (
            t("Duration", json!("P1DT2H")),
            t("Duration", json!("P1DT2H")),
        ),
        (
            t(
                "List",
                json!([t("Integer", json!("1")), t("String", json!("a"))]),
            ),
            t(
                "List",
                json!([t("Integer", json!("1")), t("String", json!("a"))]),
            ),
        ),
        (
            t("Map", json!({"k": t("Integer", json!("7"))})),
            t("Map", json!({"k": t("Integer", json!("7"))})),
        ),
    ];
    for (sent, expected) in cases {
        let a = g.typed(json!({"statement": "RETURN $v AS v", "parameters": {"v": sent}}));
        assert_eq!(a.status, 202, "{sent}: {}", a.body);
        assert_eq!(a.body["data"]["values"][0][0], expected, "{sent}");
    }
    // Typed values reach Cypher as the values they are.
    let a = g.typed(json!({
        "statement": "RETURN $d.year AS y, $n + 1 AS n",
        "parameters": {"d": t("Date", json!("2024-01-31")), "n": t("Integer", json!("41"))},
    }));
    assert_eq!(
        a.body["data"]["values"][0],
        json!([t("Integer", json!("2024")), t("Integer", json!("42"))])
    );
    for bad in [
        t("Integer", json!("forty-two")),
        t("Integer", json!(42)),
        t("Date", json!("2024-13-45")),
        t("Time", json!("12:50:35")),
        t("LocalDateTime", json!("2015-07-04T19:32:24Z")),
        t("Base64", json!("***")),
        t("Point", json!("SRID=4326;POINT (1.2 3.4)")),
        t("Nonsense", json!("x")),
        json!({"$type": "Integer"}),
    ] {
        let a = g.typed(json!({"statement": "RETURN $v AS v", "parameters": {"v": bad}}));
        assert_eq!(a.status, 400, "{bad}: {}", a.body);
        assert_eq!(code(&a), "Neo.ClientError.Request.Invalid", "{bad}");
    }
    // With `Content-Type: application/json` a `$type` object is a plain map, as Neo4j reads it.
    let a = g.query(json!({"statement": "RETURN $v.`$type` AS t", "parameters": {"v": t("Integer", json!("1"))}}));
    assert_eq!(a.body["data"]["values"], json!([["Integer"]]), "{}", a.body);
}

#[test]
fn temporal_values_have_neo4js_types() {
    let g = Devgraph::start(&[]);
    let a = g.typed(json!({"statement": "RETURN localdatetime('2015-07-04T19:32:24') AS ldt, localtime('12:50:35') AS lt, time('12:50:35+01:00') AS t, datetime('2024-01-01T21:40:32-01:00') AS dt, date('2024-01-31') AS d, duration('P1D') AS du"}));
    assert_eq!(a.status, 202, "{}", a.body);
    let row = &a.body["data"]["values"][0];
    let types: Vec<&str> = row
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["$type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "LocalDateTime",
            "LocalTime",
            "Time",
            "OffsetDateTime",
            "Date",
            "Duration"
        ]
    );
    assert_eq!(row[0]["_value"], "2015-07-04T19:32:24");
    assert_eq!(row[1]["_value"], "12:50:35");
    // Plain JSON: a local datetime is unzoned text too.
    let a = g.query(json!({"statement": "RETURN localdatetime() AS now"}));
    let now = a.body["data"]["values"][0][0].as_str().unwrap().to_string();
    assert!(!now.ends_with('Z') && !now.contains('+'), "{now}");
}

fn is_rfc3339_utc_second(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 20
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            10 => *c == b'T',
            13 | 16 => *c == b':',
            19 => *c == b'Z',
            _ => c.is_ascii_digit(),
        })
}

#[test]
fn explicit_transactions_answer_as_documented() {
    let g = Devgraph::start(&[]);
    // "Create a transaction", the documentation's example request.
    let begin = g.post(
        "/tx",
        json!({"statement": "MERGE (n:Person {name: $name, age: $age}) RETURN n AS alice", "parameters": {"name": "Alice", "age": 42}}),
    );
    assert_eq!(begin.status, 202, "{}", begin.body);
    let affinity = begin
        .affinity
        .clone()
        .expect("neo4j-cluster-affinity on begin");
    let id = begin.body["transaction"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let expires = begin.body["transaction"]["expires"].as_str().unwrap();
    assert!(is_rfc3339_utc_second(expires), "{expires}");
    assert_eq!(begin.body["data"]["fields"], json!(["alice"]));
    assert!(
        begin.body.get("counters").is_none(),
        "counters only with includeCounters"
    );
    // A follow-up without the affinity reached a member that does not know the transaction.
    let lost = g.post(&format!("/tx/{id}"), json!({"statement": "RETURN 1"}));
    assert_eq!(lost.status, 404, "{}", lost.body);
    assert_eq!(code(&lost), "Neo.ClientError.Request.Invalid");
    let message = lost.body["errors"][0]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("Transaction with Id: \"{id}\" was not found"))
            && message.contains("neo4j-cluster-affinity"),
        "{message}"
    );
    let wrong = g.send(
        "POST",
        &format!("/tx/{id}"),
        &[
            ("content-type", "application/json"),
            ("neo4j-cluster-affinity", "bm9wZQ=="),
        ],
        Some(json!({"statement": "RETURN 1"})),
    );
    assert_eq!(wrong.status, 404);
    // With it: "Execute queries".
    let with = |method: &str, path: &str, body: Option<Json>| {
        g.send(
            method,
            path,
            &[
                ("content-type", "application/json"),
                ("neo4j-cluster-affinity", &affinity),
            ],
            body,
        )
    };
    let run = with(
        "POST",
        &format!("/tx/{id}"),
        Some(
            json!({"statement": "MERGE (n:Person {name: $name, age: $age}) RETURN n AS bob", "parameters": {"name": "Bob", "age": 43}, "includeCounters": true}),
        ),
    );
    assert_eq!(run.status, 202, "{}", run.body);
    assert_eq!(run.affinity.as_deref(), Some(affinity.as_str()));
    assert_eq!(run.body["transaction"]["id"], json!(id));
    assert_eq!(run.body["counters"]["nodesCreated"], json!(1));
    // Keep-alive: no statement.
    let alive = with("POST", &format!("/tx/{id}"), Some(json!({})));
    assert_eq!(alive.status, 202, "{}", alive.body);
    assert!(is_rfc3339_utc_second(
        alive.body["transaction"]["expires"].as_str().unwrap()
    ));
    // "Commit a transaction": the bookmarks only.
    let commit = with("POST", &format!("/tx/{id}/commit"), Some(json!({})));
    assert_eq!(commit.status, 202, "{}", commit.body);
    assert_eq!(commit.body.as_object().unwrap().len(), 1, "{}", commit.body);
    assert_eq!(commit.body["bookmarks"].as_array().unwrap().len(), 1);
    // The transaction is gone now.
    let gone = with(
        "POST",
        &format!("/tx/{id}"),
        Some(json!({"statement": "RETURN 1"})),
    );
    assert_eq!(
        (gone.status, code(&gone)),
        (404, "Neo.ClientError.Request.Invalid")
    );
    let unknown = g.send("DELETE", "/tx/nope", &[], None);
    assert_eq!(
        (unknown.status, code(&unknown)),
        (404, "Neo.ClientError.Request.Invalid")
    );
    // "Rollback a transaction": an empty begin, then DELETE.
    let begin = g.post("/tx", json!({}));
    assert_eq!(begin.status, 202);
    assert!(begin.body.get("data").is_none(), "{}", begin.body);
    let id = begin.body["transaction"]["id"].as_str().unwrap();
    let affinity = begin.affinity.unwrap();
    let rolled = g.send(
        "DELETE",
        &format!("/tx/{id}"),
        &[("neo4j-cluster-affinity", &affinity)],
        None,
    );
    assert_eq!(rolled.status, 200);
    let people = g.query(json!({"statement": "MATCH (p:Person) RETURN count(p)"}));
    assert_eq!(people.body["data"]["values"], json!([[2]]));
}

#[test]
fn the_affinity_check_can_be_turned_off() {
    let g = Devgraph::start(&["--affinity-check", "false"]);
    let begin = g.post("/tx", json!({}));
    assert!(begin.affinity.is_some());
    let id = begin.body["transaction"]["id"].as_str().unwrap();
    let run = g.post(
        &format!("/tx/{id}"),
        json!({"statement": "RETURN 1 AS one"}),
    );
    assert_eq!(run.status, 202, "{}", run.body);
}

#[test]
fn bookmarks_are_issued_checked_and_observable() {
    let g = Devgraph::start(&["--bookmark-timeout-ms", "300"]);
    let read = g.query(json!({"statement": "RETURN 1", "accessMode": "READ"}));
    let b0 = read.body["bookmarks"][0].as_str().unwrap().to_string();
    assert!(b0.starts_with("FB:"), "{b0}");
    let write = g.query(json!({"statement": "CREATE (:X)", "bookmarks": [b0]}));
    let b1 = write.body["bookmarks"][0].as_str().unwrap().to_string();
    assert_ne!(b1, b0, "a write gets a new bookmark");
    let again = g.query(json!({"statement": "MATCH (x:X) RETURN count(x)", "accessMode": "READ", "bookmarks": [b1]}));
    assert_eq!(again.status, 202, "{}", again.body);
    assert_eq!(
        again.body["bookmarks"][0],
        json!(b1),
        "a read moves nothing"
    );
    let nothing = g.query(json!({"statement": "MATCH (x:Nothing) SET x.a = 1"}));
    assert_eq!(
        nothing.body["bookmarks"][0],
        json!(b1),
        "a write that changed nothing"
    );
    // The documentation's bookmarks are not this server's: malformed for it.
    for bad in [
        json!(["FB:kcwQt8DpQx5zR0uN3Oj/OudM3QaQ"]),
        json!(["nonsense"]),
    ] {
        let a = g.query(json!({"statement": "RETURN 1", "bookmarks": bad}));
        assert_eq!(a.status, 400, "{}", a.body);
        assert_eq!(code(&a), "Neo.ClientError.Transaction.InvalidBookmark");
    }
    let a = g.query(json!({"statement": "RETURN 1", "bookmarks": "FB:x"}));
    assert_eq!(code(&a), "Neo.ClientError.Request.Invalid");
    // A bookmark from the future: this server never gets there.
    let future = {
        let raw = base64_decode(b1.strip_prefix("FB:").unwrap());
        let mut raw = raw;
        let n = raw.len();
        raw[n - 1] = raw[n - 1].wrapping_add(5);
        format!("FB:{}", base64_encode(&raw))
    };
    let started = std::time::Instant::now();
    let a = g.query(json!({"statement": "RETURN 1", "bookmarks": [future]}));
    assert_eq!(
        code(&a),
        "Neo.TransientError.Transaction.BookmarkTimeout",
        "{}",
        a.body
    );
    assert!(started.elapsed() >= Duration::from_millis(250));
    let a = g.post("/tx", json!({"bookmarks": [future]}));
    assert_eq!(code(&a), "Neo.TransientError.Transaction.BookmarkTimeout");
    // A transaction's commit advances the bookmark; its statements carry none.
    let begin = g.post("/tx", json!({"bookmarks": [b1]}));
    let id = begin.body["transaction"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let affinity = begin.affinity.unwrap();
    let h = [
        ("content-type", "application/json"),
        ("neo4j-cluster-affinity", affinity.as_str()),
    ];
    let run = g.send(
        "POST",
        &format!("/tx/{id}"),
        &h,
        Some(json!({"statement": "CREATE (:X)"})),
    );
    assert!(run.body.get("bookmarks").is_none(), "{}", run.body);
    let commit = g.send("POST", &format!("/tx/{id}/commit"), &h, Some(json!({})));
    let b2 = commit.body["bookmarks"][0].as_str().unwrap().to_string();
    assert!(b2 != b1 && b2 != b0);
    // What each request brought and got.
    let rows = g.query(json!({"statement": "CALL devgraph.requests() YIELD seq, kind, statement, access_mode, explicit, transaction, bookmarks_in, bookmark_out, status, error RETURN kind, statement, access_mode, explicit, bookmarks_in, bookmark_out, error ORDER BY seq"}));
    assert_eq!(rows.status, 202, "{}", rows.body);
    let rows = rows.body["data"]["values"].as_array().unwrap().clone();
    let write_row = rows
        .iter()
        .find(|r| r[1] == json!("CREATE (:X)") && r[0] == json!("auto-commit"))
        .unwrap();
    assert_eq!(write_row[4], json!([b0]));
    assert_eq!(write_row[5], json!(b1));
    let read_row = rows
        .iter()
        .find(|r| r[1] == json!("MATCH (x:X) RETURN count(x)"))
        .unwrap();
    assert_eq!((&read_row[2], &read_row[4]), (&json!("READ"), &json!([b1])));
    let in_tx = rows.iter().find(|r| r[0] == json!("run")).unwrap();
    assert_eq!(
        (&in_tx[3], &in_tx[4], &in_tx[5]),
        (&json!(true), &json!([b1]), &Json::Null)
    );
    let commit_row = rows.iter().find(|r| r[0] == json!("commit")).unwrap();
    assert_eq!(commit_row[5], json!(b2));
    assert!(
        rows.iter()
            .any(|r| r[6] == json!("Neo.ClientError.Transaction.InvalidBookmark"))
    );
    assert!(!rows.iter().any(|r| {
        r[1].as_str()
            .is_some_and(|s| s.contains("devgraph.requests"))
    }));
    let cleared = g.query(json!({"statement": "CALL devgraph.requests.clear()"}));
    assert!(cleared.body["data"]["values"][0][0].as_i64().unwrap() > 5);
    let none = g.query(json!({"statement": "CALL devgraph.requests()"}));
    assert_eq!(none.body["data"]["values"], json!([]));
}

fn base64_decode(text: &str) -> Vec<u8> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .unwrap()
}

fn base64_encode(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[test]
fn uniqueness_constraints_are_enforced_as_neo4j_does() {
    let g = Devgraph::start(&[]);
    let ddl = "CREATE CONSTRAINT doc_id IF NOT EXISTS FOR (d:Document) REQUIRE d.id IS UNIQUE";
    let a = g.query(json!({"statement": ddl, "includeCounters": true}));
    assert_eq!(a.status, 202, "{}", a.body);
    assert_eq!(a.body["counters"]["constraintsAdded"], json!(1));
    let again = g.query(json!({"statement": ddl, "includeCounters": true}));
    assert_eq!(again.body["counters"]["constraintsAdded"], json!(0));
    let a = g.query(
        json!({"statement": "CREATE CONSTRAINT doc_id FOR (d:Document) REQUIRE d.id IS UNIQUE"}),
    );
    assert_eq!(
        code(&a),
        "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists"
    );
    let a = g.query(
        json!({"statement": "CREATE CONSTRAINT other FOR (d:Document) REQUIRE d.id IS UNIQUE"}),
    );
    assert_eq!(code(&a), "Neo.ClientError.Schema.ConstraintAlreadyExists");
    // A second node with the value: refused, and the statement applies nothing.
    g.query(json!({"statement": "CREATE (:Document {id: 'a'})"}));
    for statement in [
        "CREATE (:Marker) CREATE (:Document {id: 'a'})",
        "CREATE (:Document {id: 'b'}), (:Document {id: 'b'})",
        "CREATE (:Marker) WITH 1 AS x MATCH (d:Document {id: 'a'}) CREATE (:Document {id: d.id})",
        "CREATE (m:Marker {id: 'a'}) SET m:Document",
    ] {
        let a = g.query(json!({"statement": statement}));
        assert_eq!(a.status, 400, "{statement}: {}", a.body);
        assert_eq!(
            code(&a),
            "Neo.ClientError.Schema.ConstraintValidationFailed",
            "{statement}"
        );
    }
    let count = |statement: &str| {
        g.query(json!({"statement": statement})).body["data"]["values"][0][0].clone()
    };
    assert_eq!(count("MATCH (d:Document) RETURN count(d)"), json!(1));
    assert_eq!(count("MATCH (m:Marker) RETURN count(m)"), json!(0));
    // In an explicit transaction: the failing statement rolls the transaction back.
    let begin = g.post("/tx", json!({"statement": "CREATE (:Marker)"}));
    let id = begin.body["transaction"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let affinity = begin.affinity.unwrap();
    let h = [
        ("content-type", "application/json"),
        ("neo4j-cluster-affinity", affinity.as_str()),
    ];
    let a = g.send(
        "POST",
        &format!("/tx/{id}"),
        &h,
        Some(json!({"statement": "CREATE (:Document {id: 'a'})"})),
    );
    assert_eq!(
        code(&a),
        "Neo.ClientError.Schema.ConstraintValidationFailed"
    );
    let a = g.send("POST", &format!("/tx/{id}/commit"), &h, Some(json!({})));
    assert_eq!(a.status, 404);
    assert_eq!(count("MATCH (m:Marker) RETURN count(m)"), json!(0));
    // Over existing duplicates a constraint cannot be created.
    g.query(json!({"statement": "CREATE (:Dup {k: 1}), (:Dup {k: 1})"}));
    let a = g.query(json!({"statement": "CREATE CONSTRAINT dup_k IF NOT EXISTS FOR (d:Dup) REQUIRE d.k IS UNIQUE"}));
    assert_eq!(
        code(&a),
        "Neo.ClientError.Schema.ConstraintCreationFailed",
        "{}",
        a.body
    );
    // SHOW CONSTRAINTS in Neo4j 5's columns.
    let show = g.query(json!({"statement": "SHOW CONSTRAINTS"}));
    assert_eq!(
        show.body["data"]["fields"],
        json!([
            "id",
            "name",
            "type",
            "entityType",
            "labelsOrTypes",
            "properties",
            "ownedIndex",
            "propertyType"
        ])
    );
    assert_eq!(show.body["data"]["values"].as_array().unwrap().len(), 1);
    let names = g.query(json!({"statement": "SHOW CONSTRAINTS YIELD name, type WHERE type = 'UNIQUENESS' RETURN name"}));
    assert_eq!(
        names.body["data"]["values"],
        json!([["doc_id"]]),
        "{}",
        names.body
    );
    let a = g.query(json!({"statement": "SHOW CONSTRAINTS", "accessMode": "READ"}));
    assert_eq!(a.status, 202);
    let a = g.query(json!({"statement": ddl, "accessMode": "READ"}));
    assert_eq!(code(&a), "Neo.ClientError.Statement.AccessMode");
    // DROP.
    let a = g.query(json!({"statement": "DROP CONSTRAINT nope"}));
    assert_eq!(code(&a), "Neo.ClientError.Schema.ConstraintDropFailed");
    let a = g.query(json!({"statement": "DROP CONSTRAINT nope IF EXISTS"}));
    assert_eq!(a.status, 202);
    let a = g.query(json!({"statement": "DROP CONSTRAINT doc_id", "includeCounters": true}));
    assert_eq!(a.body["counters"]["constraintsRemoved"], json!(1));
    let a = g.query(json!({"statement": "CREATE (:Document {id: 'a'})"}));
    assert_eq!(a.status, 202, "dropped: {}", a.body);
}

#[test]
fn concurrent_writers_of_one_key_one_wins() {
    let g = Devgraph::start(&[]);
    g.query(json!({"statement": "CREATE CONSTRAINT k FOR (n:Key) REQUIRE n.v IS UNIQUE"}));
    // Twenty auto-commit writers at once.
    let outcomes: Vec<(u16, String)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..20)
            .map(|_| {
                s.spawn(|| {
                    let a = g.query(json!({"statement": "CREATE (:Key {v: 'same'})"}));
                    (a.status, code(&a).to_string())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(
        outcomes.iter().filter(|o| o.0 == 202).count(),
        1,
        "{outcomes:?}"
    );
    assert!(
        outcomes
            .iter()
            .filter(|o| o.0 != 202)
            .all(|o| o.1 == "Neo.ClientError.Schema.ConstraintValidationFailed")
    );
    // Twenty explicit transactions, all open at once, each creating the key, then committing.
    let opened: Vec<(String, String)> = (0..20)
        .map(|_| {
            let b = g.post("/tx", json!({}));
            (
                b.body["transaction"]["id"].as_str().unwrap().to_string(),
                b.affinity.unwrap(),
            )
        })
        .collect();
    let committed: Vec<bool> = std::thread::scope(|s| {
        let handles: Vec<_> = opened
            .iter()
            .map(|(id, affinity)| {
                let g = &g;
                s.spawn(move || {
                    let h = [
                        ("content-type", "application/json"),
                        ("neo4j-cluster-affinity", affinity.as_str()),
                    ];
                    let run = g.send(
                        "POST",
                        &format!("/tx/{id}"),
                        &h,
                        Some(json!({"statement": "CREATE (:Key {v: 'tx'})"})),
                    );
                    if run.status != 202 {
                        return false;
                    }
                    g.send("POST", &format!("/tx/{id}/commit"), &h, Some(json!({})))
                        .status
                        == 202
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(committed.iter().filter(|c| **c).count(), 1, "{committed:?}");
    let a =
        g.query(json!({"statement": "MATCH (k:Key) RETURN k.v AS v, count(*) AS n ORDER BY v"}));
    assert_eq!(a.body["data"]["values"], json!([["same", 1], ["tx", 1]]));
}

#[test]
fn constraints_persist_with_the_graph_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("graph.grafeo");
    let file = file.to_str().unwrap();
    {
        let g = Devgraph::start(&["--data", file]);
        let a = g.query(
            json!({"statement": "CREATE CONSTRAINT kept FOR (n:Kept) REQUIRE n.id IS UNIQUE"}),
        );
        assert_eq!(a.status, 202, "{}", a.body);
        g.query(json!({"statement": "CREATE (:Kept {id: 1})"}));
    }
    let g = Devgraph::start(&["--data", file]);
    let show = g.query(json!({"statement": "SHOW CONSTRAINTS YIELD name RETURN name"}));
    assert_eq!(
        show.body["data"]["values"],
        json!([["kept"]]),
        "{}",
        show.body
    );
    // (The test kills devgraph, and Grafeo may lose the last writes then: the node is
    // not the point here, the constraint is.)
    g.query(json!({"statement": "CREATE (:Kept {id: 2})"}));
    let a = g.query(json!({"statement": "CREATE (:Kept {id: 2})"}));
    assert_eq!(
        code(&a),
        "Neo.ClientError.Schema.ConstraintValidationFailed"
    );
}

/// Neo4j 5's kernel (`AlreadyIndexedException`, constraint context): a uniqueness or key
/// constraint cannot be created while a plain index covers its label and properties, even
/// with IF NOT EXISTS; after DROP INDEX it can. Nothing is created by the refused one.
#[test]
fn a_constraint_over_a_plain_index_is_refused_until_the_index_is_dropped() {
    let g = Devgraph::start(&[]);
    let index = "CREATE INDEX kg_actionlog_execution_key IF NOT EXISTS FOR (n:ActionLog) ON (n.execution_key)";
    assert_eq!(g.query(json!({"statement": index})).status, 202);
    let unique = "CREATE CONSTRAINT kg_actionlog_execution_key_unique IF NOT EXISTS FOR (n:ActionLog) REQUIRE n.execution_key IS UNIQUE";
    let message = "There already exists an index (:ActionLog {execution_key}). A constraint cannot be created until the index has been dropped.";
    for statement in [
        unique,
        "CREATE CONSTRAINT kg_actionlog_execution_key_unique FOR (n:ActionLog) REQUIRE n.execution_key IS UNIQUE",
        "CREATE CONSTRAINT FOR (n:ActionLog) REQUIRE n.execution_key IS NODE KEY",
    ] {
        let a = g.query(json!({"statement": statement, "includeCounters": true}));
        assert_eq!(a.status, 400, "{statement}: {}", a.body);
        assert_eq!(code(&a), "Neo.ClientError.Schema.IndexAlreadyExists");
        assert_eq!(a.body["errors"][0]["message"], json!(message));
    }
    let constraints = g.query(json!({"statement": "SHOW CONSTRAINTS"}));
    assert_eq!(
        constraints.body["data"]["values"],
        json!([]),
        "nothing created"
    );
    // Not enforced either: two nodes may share the value.
    let a = g.query(json!({"statement": "CREATE (:ActionLog {execution_key: 'k'}), (:ActionLog {execution_key: 'k'})"}));
    assert_eq!(a.status, 202, "{}", a.body);
    g.query(json!({"statement": "MATCH (n:ActionLog) DETACH DELETE n"}));
    // A composite index blocks only the same property list.
    g.query(json!({"statement": "CREATE INDEX pair_ab FOR (n:Pair) ON (n.a, n.b)"}));
    let a = g.query(json!({"statement": "CREATE CONSTRAINT pair_key FOR (n:Pair) REQUIRE (n.a, n.b) IS NODE KEY"}));
    assert_eq!(code(&a), "Neo.ClientError.Schema.IndexAlreadyExists");
    assert_eq!(
        a.body["errors"][0]["message"],
        json!(
            "There already exists an index (:Pair {a, b}). A constraint cannot be created until the index has been dropped."
        )
    );
    let a = g
        .query(json!({"statement": "CREATE CONSTRAINT pair_a FOR (n:Pair) REQUIRE n.a IS UNIQUE"}));
    assert_eq!(a.status, 202, "{}", a.body);
    // A vector or full-text index is no RANGE index: it does not block.
    g.query(json!({"statement": "CREATE FULLTEXT INDEX doc_text FOR (d:Doc) ON EACH [d.text]"}));
    let a = g.query(json!({"statement": "CREATE CONSTRAINT doc_text_unique FOR (d:Doc) REQUIRE d.text IS UNIQUE"}));
    assert_eq!(a.status, 202, "{}", a.body);
    // A constraint may not take an index's name.
    let a = g.query(json!({"statement": "CREATE CONSTRAINT pair_ab IF NOT EXISTS FOR (n:Pair) REQUIRE n.c IS UNIQUE"}));
    assert_eq!(
        code(&a),
        "Neo.ClientError.Schema.IndexWithNameAlreadyExists"
    );
    assert_eq!(
        a.body["errors"][0]["message"],
        json!("There already exists an index called 'pair_ab'.")
    );
    // The application's migration: drop the old index, then the constraint succeeds.
    let a = g.query(json!({"statement": "DROP INDEX kg_actionlog_execution_key IF EXISTS"}));
    assert_eq!(a.status, 202, "{}", a.body);
    let a = g.query(json!({"statement": unique, "includeCounters": true}));
    assert_eq!(a.status, 202, "{}", a.body);
    assert_eq!(a.body["counters"]["constraintsAdded"], json!(1));
    let a = g.query(json!({"statement": "CREATE (:ActionLog {execution_key: 'k'}), (:ActionLog {execution_key: 'k'})"}));
    assert_eq!(
        code(&a),
        "Neo.ClientError.Schema.ConstraintValidationFailed"
    );
    // Run again (setup is idempotent): the DROP is a no-op, the constraint exists.
    assert_eq!(
        g.query(json!({"statement": "DROP INDEX kg_actionlog_execution_key IF EXISTS"}))
            .status,
        202
    );
    let a = g.query(json!({"statement": unique, "includeCounters": true}));
    assert_eq!(a.status, 202, "{}", a.body);
    assert_eq!(a.body["counters"]["constraintsAdded"], json!(0));
}

/// Neo4j 5's kernel (`AlreadyConstrainedException`, index context): a plain index on a
/// schema a uniqueness or key constraint covers is its backing index's equivalent, so
/// IF NOT EXISTS does nothing and without it the statement fails. Plain indexes among
/// themselves: `IndexAlreadyExists`, `EquivalentSchemaRuleAlreadyExists`, names shared.
#[test]
fn an_index_over_a_constraint_is_a_no_op_with_if_not_exists_and_an_error_without() {
    let g = Devgraph::start(&[]);
    let a = g.query(json!({"statement": "CREATE CONSTRAINT log_key FOR (n:ActionLog) REQUIRE n.execution_key IS UNIQUE"}));
    assert_eq!(a.status, 202, "{}", a.body);
    let show = || {
        g.query(json!({"statement": "SHOW INDEXES YIELD name, type, owningConstraint RETURN name, type, owningConstraint"}))
            .body["data"]["values"]
            .clone()
    };
    let before = show();
    let a = g.query(json!({"statement": "CREATE INDEX kg_actionlog_execution_key IF NOT EXISTS FOR (n:ActionLog) ON (n.execution_key)"}));
    assert_eq!(a.status, 202, "{}", a.body);
    assert_eq!(show(), before, "nothing created");
    for statement in [
        "CREATE INDEX kg_actionlog_execution_key FOR (n:ActionLog) ON (n.execution_key)",
        "CREATE INDEX FOR (n:ActionLog) ON (n.execution_key)",
    ] {
        let a = g.query(json!({"statement": statement}));
        assert_eq!(a.status, 400, "{statement}: {}", a.body);
        assert_eq!(code(&a), "Neo.ClientError.Schema.ConstraintAlreadyExists");
        assert_eq!(
            a.body["errors"][0]["message"],
            json!(
                "There is a uniqueness constraint on (:ActionLog {execution_key}), so an index is already created that matches this."
            )
        );
    }
    assert_eq!(show(), before, "nothing created");
    // A name taken by a constraint.
    let a = g.query(json!({"statement": "CREATE INDEX log_key FOR (n:ActionLog) ON (n.other)"}));
    assert_eq!(
        code(&a),
        "Neo.ClientError.Schema.ConstraintWithNameAlreadyExists"
    );
    let a = g.query(
        json!({"statement": "CREATE INDEX log_key IF NOT EXISTS FOR (n:ActionLog) ON (n.other)"}),
    );
    assert_eq!(a.status, 202);
    // Plain indexes among themselves.
    assert_eq!(
        g.query(json!({"statement": "CREATE INDEX po_id FOR (n:PurchaseOrder) ON (n.id)"}))
            .status,
        202
    );
    let a = g.query(json!({"statement": "CREATE INDEX po_id FOR (n:PurchaseOrder) ON (n.id)"}));
    assert_eq!(
        code(&a),
        "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists"
    );
    let a = g.query(json!({"statement": "CREATE INDEX po_id_2 FOR (n:PurchaseOrder) ON (n.id)"}));
    assert_eq!(code(&a), "Neo.ClientError.Schema.IndexAlreadyExists");
    assert_eq!(
        a.body["errors"][0]["message"],
        json!("There already exists an index (:PurchaseOrder {id}).")
    );
    let a = g.query(
        json!({"statement": "CREATE INDEX po_id_2 IF NOT EXISTS FOR (n:PurchaseOrder) ON (n.id)"}),
    );
    assert_eq!(a.status, 202);
    let a = g.query(json!({"statement": "CREATE INDEX po_id FOR (n:PurchaseOrder) ON (n.number)"}));
    assert_eq!(
        code(&a),
        "Neo.ClientError.Schema.IndexWithNameAlreadyExists"
    );
    // Index DDL in READ mode.
    let a = g.query(json!({"statement": "CREATE INDEX s_id IF NOT EXISTS FOR (n:Supplier) ON (n.id)", "accessMode": "READ"}));
    assert_eq!(code(&a), "Neo.ClientError.Statement.AccessMode");
}

/// Neo4j lists a constraint's backing index (RANGE, `owningConstraint` set, named as the
/// constraint) in SHOW INDEXES, beside the two token-lookup indexes every database has, in
/// these columns and sorted by name (observed on Neo4j 5.26.30, 27 Nov 2026; its `id`s
/// follow creation order, devgraph's the listing's, and nothing reads them).
#[test]
fn show_indexes_lists_the_index_backing_a_constraint() {
    let g = Devgraph::start(&[]);
    g.query(
        json!({"statement": "CREATE INDEX po_id IF NOT EXISTS FOR (n:PurchaseOrder) ON (n.id)"}),
    );
    g.query(
        json!({"statement": "CREATE CONSTRAINT log_id FOR (n:ActionLog) REQUIRE n.id IS UNIQUE"}),
    );
    g.query(json!({"statement": "CREATE VECTOR INDEX chunk_embedding FOR (c:Chunk) ON c.embedding OPTIONS {indexConfig: {`vector.dimensions`: 16}}"}));
    let a = g.query(json!({"statement": "SHOW INDEXES", "accessMode": "READ"}));
    assert_eq!(a.status, 202, "{}", a.body);
    let fields = &a.body["data"]["fields"];
    assert_eq!(
        fields,
        &json!([
            "id",
            "name",
            "state",
            "populationPercent",
            "type",
            "entityType",
            "labelsOrTypes",
            "properties",
            "indexProvider",
            "owningConstraint",
            "lastRead",
            "readCount"
        ])
    );
    let rows = a.body["data"]["values"].as_array().unwrap();
    // Everything but `id`.
    let without_id = |row: &Json| Json::Array(row.as_array().unwrap()[1..].to_vec());
    assert_eq!(
        rows.iter().map(without_id).collect::<Vec<_>>(),
        vec![
            json!([
                "chunk_embedding",
                "ONLINE",
                100.0,
                "VECTOR",
                "NODE",
                ["Chunk"],
                ["embedding"],
                "vector-2.0",
                null,
                null,
                null
            ]),
            json!([
                "index_343aff4e",
                "ONLINE",
                100.0,
                "LOOKUP",
                "NODE",
                null,
                null,
                "token-lookup-1.0",
                null,
                null,
                0
            ]),
            json!([
                "index_f7700477",
                "ONLINE",
                100.0,
                "LOOKUP",
                "RELATIONSHIP",
                null,
                null,
                "token-lookup-1.0",
                null,
                null,
                0
            ]),
            json!([
                "log_id",
                "ONLINE",
                100.0,
                "RANGE",
                "NODE",
                ["ActionLog"],
                ["id"],
                "range-1.0",
                "log_id",
                null,
                null
            ]),
            json!([
                "po_id",
                "ONLINE",
                100.0,
                "RANGE",
                "NODE",
                ["PurchaseOrder"],
                ["id"],
                "range-1.0",
                null,
                null,
                null
            ]),
        ],
        "{}",
        a.body
    );
    let owned = g.query(json!({"statement": "SHOW RANGE INDEXES YIELD name, owningConstraint WHERE owningConstraint IS NOT NULL RETURN name"}));
    assert_eq!(
        owned.body["data"]["values"],
        json!([["log_id"]]),
        "{}",
        owned.body
    );
    let shown =
        g.query(json!({"statement": "SHOW CONSTRAINTS YIELD ownedIndex RETURN ownedIndex"}));
    assert_eq!(shown.body["data"]["values"], json!([["log_id"]]));
    let vector = g.query(json!({"statement": "SHOW VECTOR INDEXES YIELD name RETURN name"}));
    assert_eq!(vector.body["data"]["values"], json!([["chunk_embedding"]]));
    // Dropping the constraint drops its index.
    g.query(json!({"statement": "DROP CONSTRAINT log_id"}));
    let names = g.query(json!({"statement": "SHOW INDEXES YIELD name RETURN name"}));
    assert_eq!(
        names.body["data"]["values"],
        json!([
            ["chunk_embedding"],
            ["index_343aff4e"],
            ["index_f7700477"],
            ["po_id"]
        ])
    );
}
