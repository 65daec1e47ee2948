//! Issue #14 against the devgraph binary (its allocator counts each query's memory):
//! resource bombs answer Neo4j's memory error at once and devgraph stays small; the
//! client's `maxExecutionTime` stops a slow statement; PROFILE and the schema procedures
//! answer in Neo4j's shapes.

mod common;

use common::Devgraph;
use serde_json::{Value as Json, json};
use std::time::{Duration, Instant};

impl Devgraph {
    fn query(&self, body: Json) -> (u16, Json) {
        self.post("", body)
    }

    /// A request to `path` under the Query API (e.g. `/tx` to begin a transaction).
    fn post(&self, path: &str, body: Json) -> (u16, Json) {
        let agent = ureq::Agent::new_with_config(
            ureq::Agent::config_builder()
                .http_status_as_error(false)
                .timeout_global(Some(Duration::from_secs(60)))
                .build(),
        );
        let mut response = agent
            .post(format!("{}{path}", self.base))
            .header("authorization", "Basic bmVvNGo6ZGV2Z3JhcGg=")
            .header("content-type", "application/json")
            .send(body.to_string())
            .unwrap();
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string().unwrap();
        (status, serde_json::from_str(&text).unwrap())
    }

    fn rss_kib(&self) -> u64 {
        std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap()
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap()
    }
}

fn code(answer: &Json) -> &str {
    answer["errors"][0]["code"].as_str().unwrap_or_default()
}

#[test]
fn resource_bombs_answer_the_memory_error_and_devgraph_stays_small() {
    let graph = Devgraph::start(&["--demo"]);
    for statement in [
        "RETURN range(1, 20000000) AS r",
        "RETURN size(range(1, 100000000)) AS s",
        "RETURN reduce(s = 0, x IN range(1, 100000000) | s + x) AS s",
        "UNWIND range(1, 100000000) AS x RETURN collect(x) AS xs",
        "MATCH p=(a)-[*]-(b) RETURN count(p)",
    ] {
        let started = Instant::now();
        let (status, answer) = graph.query(json!({"statement": statement, "accessMode": "READ"}));
        let took = started.elapsed();
        assert_eq!(status, 400, "{statement}: {answer}");
        assert_eq!(
            code(&answer),
            "Neo.TransientError.General.MemoryPoolOutOfMemoryError",
            "{statement}: {answer}"
        );
        assert!(took < Duration::from_secs(20), "{statement}: {took:?}");
        let rss = graph.rss_kib();
        eprintln!("{statement}: {took:?}, RSS {rss} KiB");
        assert!(rss < 700 * 1024, "{statement}: RSS {rss} KiB");
    }
    // …and it still answers.
    let (status, answer) =
        graph.query(json!({"statement": "MATCH (n:Supplier) RETURN count(n) AS n"}));
    assert_eq!((status, &answer["data"]["values"]), (202, &json!([[10]])));
    let (status, answer) = graph.query(json!({"statement": "RETURN size(range(1, 100000)) AS n"}));
    assert_eq!(
        (status, &answer["data"]["values"]),
        (202, &json!([[100000]]))
    );
}

/// Neo4j 5.26.30, observed: `maxExecutionTime` stops a transaction begun with it (`POST
/// …/tx`, here with its first statement) with `TransactionTimedOutClientConfiguration`;
/// on an auto-commit request it is accepted and ignored, as are 0, negative and fractional
/// values; a value that is not a number is `Request.Invalid`.
#[test]
fn max_execution_time_stops_a_slow_transaction_and_is_ignored_on_auto_commit() {
    let graph = Devgraph::start(&["--demo"]);
    let slow = "MATCH (a), (b), (c) RETURN count(*) AS n";
    let started = Instant::now();
    let (status, answer) = graph.post(
        "/tx",
        json!({"statement": slow, "maxExecutionTime": 1, "accessMode": "READ"}),
    );
    let took = started.elapsed();
    assert_eq!(status, 400, "{answer}");
    assert_eq!(
        code(&answer),
        "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration"
    );
    assert!(took < Duration::from_secs(4), "{took:?}");
    // Auto-commit: the same limit is not applied (a quicker statement, so the test is short).
    let (status, answer) = graph.query(json!({
        "statement": "UNWIND range(1, 3000000) AS x WITH x WHERE x = 0 RETURN count(x) AS n",
        "maxExecutionTime": 1,
    }));
    assert_eq!(
        (status, &answer["data"]["values"]),
        (202, &json!([[0]])),
        "{answer}"
    );
    for limit in [json!(1), json!(0), json!(-1), json!(1.5)] {
        let (status, answer) =
            graph.query(json!({"statement": "RETURN 1", "maxExecutionTime": limit}));
        assert_eq!(status, 202, "{limit}: {answer}");
    }
    let (status, answer) = graph.query(json!({"statement": "RETURN 1", "maxExecutionTime": "x"}));
    assert_eq!(
        (status, code(&answer)),
        (400, "Neo.ClientError.Request.Invalid")
    );
}

#[test]
fn profile_and_schema_procedures_answer_like_neo4j() {
    let graph = Devgraph::start(&["--demo"]);
    let (status, answer) = graph.query(json!({
        "statement": "PROFILE MATCH (s:Supplier) RETURN s.id AS id ORDER BY id LIMIT 2",
        "accessMode": "READ",
    }));
    assert_eq!(status, 202, "{answer}");
    assert_eq!(answer["data"]["values"], json!([["SUP-001"], ["SUP-002"]]));
    let plan = &answer["profiledQueryPlan"];
    assert_eq!(plan["records"], 2);
    assert!(
        plan["operatorType"]
            .as_str()
            .unwrap()
            .starts_with("ProduceResults")
    );
    // PROFILE of a write in READ mode is refused like the write.
    let (status, answer) =
        graph.query(json!({"statement": "PROFILE CREATE (n:X) RETURN n", "accessMode": "READ"}));
    assert_eq!(
        (status, code(&answer)),
        (400, "Neo.ClientError.Statement.AccessMode")
    );

    let (status, answer) = graph.query(json!({"statement": "CALL db.schema.visualization()"}));
    assert_eq!(status, 202, "{answer}");
    assert_eq!(answer["data"]["fields"], json!(["nodes", "relationships"]));
    let nodes = answer["data"]["values"][0][0].as_array().unwrap();
    let supplier = nodes
        .iter()
        .find(|n| n["labels"] == json!(["Supplier"]))
        .expect("a Supplier node");
    assert_eq!(supplier["properties"]["name"], "Supplier");
    let relationships = answer["data"]["values"][0][1].as_array().unwrap();
    assert!(
        relationships
            .iter()
            .any(|r| r["type"] == "SUPPLIES" && r["startNodeElementId"] == supplier["elementId"])
    );

    let (status, answer) = graph.query(json!({
        "statement": "CALL db.schema.nodeTypeProperties() YIELD nodeType, nodeLabels, propertyName, propertyTypes, mandatory WHERE nodeType = ':`Supplier`' RETURN propertyName, propertyTypes, mandatory, nodeLabels ORDER BY propertyName",
        "accessMode": "READ",
    }));
    assert_eq!(status, 202, "{answer}");
    assert_eq!(
        answer["data"]["values"][0],
        json!(["blocked", ["Boolean"], true, ["Supplier"]])
    );
    let (status, answer) = graph.query(json!({
        "statement": "CALL db.schema.relTypeProperties() YIELD relType, propertyName AS p WHERE relType = ':`COMPONENT_OF`' RETURN relType, p",
    }));
    assert_eq!(status, 202, "{answer}");
    assert_eq!(
        answer["data"]["values"],
        json!([[":`COMPONENT_OF`", "quantity"]])
    );
    let (status, answer) = graph
        .query(json!({"statement": "CALL db.schema.nodeTypeProperties() YIELD nope RETURN nope"}));
    assert_eq!(
        (status, code(&answer)),
        (400, "Neo.ClientError.Statement.SyntaxError")
    );
}
