//! What a Neo4j cluster needs of the application and devgraph checks (it records each
//! request's bookmarks: `CALL devgraph.requests()`, and enforces uniqueness constraints):
//! reads that wait for the writes before them (causal consistency across the components of
//! a request and the turns of a conversation), and unique keys whose violations are 409s.

use kg_e2e::llm_stub::{ScriptedLlm, call, text};
use kg_e2e::{Graph, Stack};
use serde_json::{Value, json};

/// One recorded graph request.
#[derive(Debug)]
struct Recorded {
    seq: u64,
    statement: String,
    access_mode: String,
    bookmarks_in: Vec<String>,
    bookmark_out: Option<String>,
}

async fn recorded(graph: &Graph) -> Vec<Recorded> {
    graph
        .query("CALL devgraph.requests() YIELD seq, statement, access_mode, bookmarks_in, bookmark_out RETURN seq, statement, access_mode, bookmarks_in, bookmark_out")
        .await
        .unwrap()
        .iter()
        .map(|r| Recorded {
            seq: r[0].as_u64().unwrap(),
            statement: r[1].as_str().unwrap_or_default().to_string(),
            access_mode: r[2].as_str().unwrap_or_default().to_string(),
            bookmarks_in: r[3]
                .as_array()
                .map(|b| b.iter().filter_map(|x| x.as_str().map(String::from)).collect())
                .unwrap_or_default(),
            bookmark_out: r[4].as_str().map(String::from),
        })
        .collect()
}

async fn chat(stack: &Stack, body: Value) -> Value {
    let (status, answer) = stack
        .host
        .send("POST", "/chat", &body.to_string())
        .await
        .unwrap();
    assert_eq!(status, 200, "{answer}");
    answer
}

/// Turn 1 pays orders (the action executor writes); turn 2 of the same conversation reads
/// with the query tools (another component, another request). On a cluster the read may
/// reach a follower that has not applied the payment yet; it must wait for it, so it has
/// to carry the bookmark of the payment's last write.
#[tokio::test]
async fn a_turns_reads_wait_for_the_writes_of_the_turn_before() {
    if kg_e2e::devgraph_only(
        "it reads the bookmarks each request carried from devgraph's request log (CALL devgraph.requests()); Neo4j keeps none",
    ) {
        return;
    }
    let llm = ScriptedLlm::start().await;
    let stack = Stack::start_with(&llm.variables()).await.unwrap();
    // ACME's orders: some are payable, others fail their preconditions.
    let ids: Vec<String> = stack
        .graph
        .query("MATCH (o:PurchaseOrder)-[:PLACED_WITH]->(:Supplier {id: 'SUP-001'}) RETURN o.id ORDER BY o.id")
        .await
        .unwrap()
        .iter()
        .map(|r| r[0].as_str().unwrap().to_string())
        .collect();
    llm.then([
        call(
            "propose_action_plan",
            json!({"entity_type": "PurchaseOrder", "action_name": "makePayment", "entity_ids": ids}),
        ),
        text("Proposed."),
        text("Done."),
    ]);
    let first = chat(
        &stack,
        json!({"message": "Pay all orders of supplier ACME", "routing_mode": "rule"}),
    )
    .await;
    assert_eq!(
        first["actions"]["total"].as_u64(),
        Some(ids.len() as u64),
        "{first}"
    );
    assert!(first["actions"]["succeeded"].as_u64() > Some(0), "{first}");
    let conversation = first["conversation_id"].as_str().unwrap().to_string();
    let before = recorded(&stack.graph).await;
    let last_write = before
        .iter()
        .filter(|r| r.access_mode == "WRITE" && r.bookmark_out.is_some())
        .max_by_key(|r| r.seq)
        .expect("the payment wrote");
    let written = last_write.bookmark_out.clone().unwrap();
    let turn_two_from = before.iter().map(|r| r.seq).max().unwrap();

    llm.then([
        call(
            "run_read_cypher",
            json!({"query": "MATCH (o:PurchaseOrder) WHERE o.id IN $ids RETURN o.id, o.status", "parameters": {"ids": ids}}),
        ),
        text("Here they are."),
    ]);
    chat(
        &stack,
        json!({"message": "Show the status of the orders of ACME", "conversation_id": conversation, "routing_mode": "rule"}),
    )
    .await;
    let reads: Vec<Recorded> = recorded(&stack.graph)
        .await
        .into_iter()
        // EXPLAIN only plans (the read-only check): it reads no data, so it need not wait.
        .filter(|r| {
            r.seq > turn_two_from
                && r.statement.contains("o.status")
                && !r.statement.starts_with("EXPLAIN")
        })
        .collect();
    assert!(!reads.is_empty(), "the tool's read was recorded");
    for read in &reads {
        assert!(
            read.bookmarks_in.contains(&written),
            "turn two's read must wait for turn one's last write {written}: {read:?}"
        );
    }

    // A conversation without writes sends no bookmarks it does not have.
    llm.then([
        call("search_instances", json!({"search_term": "ACME"})),
        text("ACME."),
    ]);
    let marker = recorded(&stack.graph)
        .await
        .iter()
        .map(|r| r.seq)
        .max()
        .unwrap();
    chat(
        &stack,
        json!({"message": "Who is ACME?", "routing_mode": "rule"}),
    )
    .await;
    let fresh: Vec<Recorded> = recorded(&stack.graph)
        .await
        .into_iter()
        .filter(|r| {
            r.seq > marker && r.access_mode == "READ" && !r.statement.starts_with("EXPLAIN")
        })
        .collect();
    assert!(!fresh.is_empty());
    // Each read sends only bookmarks an earlier statement of this same turn returned (a
    // tool that reads twice chains its own reads); none it did not have.
    let mut seen: Vec<&String> = Vec::new();
    for r in &fresh {
        assert!(
            r.bookmarks_in.iter().all(|b| seen.contains(&b)),
            "another conversation does not wait for this one's writes: {fresh:?}"
        );
        seen.extend(r.bookmark_out.iter());
    }
}

/// Setup run by several callers at once on a graph without the indexes (two instances
/// starting, two admins): all succeed with the same statements. Neo4j's `IF NOT EXISTS`
/// is not atomic, so all but one of the concurrent creators of an index are refused with
/// `EquivalentSchemaRuleAlreadyExists` (a 500 in CI's fuzz run of 28 Nov) unless the
/// refusal is recognised as the race it is.
#[tokio::test]
async fn concurrent_setups_all_succeed() {
    let stack = Stack::start().await.unwrap();
    let answers =
        futures::future::join_all((0..8).map(|_| stack.host.send("POST", "/actions/setup", "{}")))
            .await;
    let mut statements = Vec::new();
    for answer in answers {
        let (status, body) = answer.unwrap();
        assert_eq!(status, 200, "{body}");
        statements.push(body["indexes"].clone());
    }
    assert!(
        statements.iter().all(|s| s == &statements[0]),
        "{statements:?}"
    );
    let (status, body) = stack
        .host
        .send("POST", "/actions/setup", "{}")
        .await
        .unwrap();
    assert_eq!((status, &body["indexes"]), (200, &statements[0]), "{body}");
}

/// A graph that already holds two action-log entries with one execution key cannot get the
/// unique key: setup says which key and why, as a 409, and keeps the lookup index.
#[tokio::test]
async fn setup_over_duplicate_keys_is_a_conflict_naming_the_key() {
    let stack = Stack::start().await.unwrap();
    stack
        .graph
        .write("CREATE (:ActionLog {id: 'L-1', execution_key: 'dup'}), (:ActionLog {id: 'L-2', execution_key: 'dup'})")
        .await
        .unwrap();
    let (status, body) = stack
        .host
        .send("POST", "/actions/setup", "{}")
        .await
        .unwrap();
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["error"]["code"], "conflict", "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("ActionLog.execution_key"), "{message}");
    assert!(
        !message.contains("ActionLog.id:"),
        "ids are unique: {message}"
    );

    // Once the duplicate is gone, setup completes.
    stack
        .graph
        .write("MATCH (l:ActionLog {id: 'L-2'}) DELETE l")
        .await
        .unwrap();
    let (status, body) = stack
        .host
        .send("POST", "/actions/setup", "{}")
        .await
        .unwrap();
    assert_eq!(status, 200, "{body}");
}

/// A deployment set up by an earlier version has plain indexes on the keys; setup replaces
/// them with the unique keys, and a second log entry with a taken key is then refused.
#[tokio::test]
async fn setup_migrates_plain_indexes_to_unique_keys() {
    let stack = Stack::start().await.unwrap();
    stack
        .graph
        .write("CREATE INDEX `kg_actionlog_execution_key` IF NOT EXISTS FOR (n:`ActionLog`) ON (n.`execution_key`)")
        .await
        .unwrap();
    let (status, body) = stack
        .host
        .send("POST", "/actions/setup", "{}")
        .await
        .unwrap();
    assert_eq!(status, 200, "{body}");
    let statements = body["indexes"].to_string();
    assert!(
        statements.contains("DROP INDEX `kg_actionlog_execution_key` IF EXISTS"),
        "{statements}"
    );
    stack
        .graph
        .write("CREATE (:ActionLog {id: 'L-1', execution_key: 'k'})")
        .await
        .unwrap();
    let refused: Value = reqwest::Client::new()
        .post(format!("{}/db/neo4j/query/v2", stack.graph.url))
        .basic_auth("neo4j", Some(kg_e2e::GRAPH_PASSWORD))
        .json(&json!({"statement": "CREATE (:ActionLog {id: 'L-2', execution_key: 'k'})"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let error = refused["errors"][0]["code"].to_string();
    assert!(
        error.contains("ConstraintValidationFailed"),
        "a second entry with a taken key is refused: {error}"
    );
}
