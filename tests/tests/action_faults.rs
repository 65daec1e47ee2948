//! Action batches when the graph fails under them (issue #14): a graph frozen mid-batch
//! (SIGSTOP) that resumes, a graph killed mid-batch, and a non-streamed batch against a
//! dead graph. Every reported outcome is checked against the graph afterwards: a success
//! was applied, a failure was not, and an applied payment is never reported failed (only
//! succeeded or `unknown`). Prints the numbers the issue asks for.

use kg_e2e::{Stack, auth};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

const EXECUTE: &str = "/actions/PurchaseOrder/makePayment/execute";

/// A stack whose batches of any size run without an approval step, with the lookup
/// indexes created, enough money, and `n` fresh approved orders `FAULT-{prefix}-{i}`.
async fn stack_with_orders(prefix: &str, n: usize) -> (Stack, Vec<String>) {
    let stack = Stack::start_with(&[("approval_batch_threshold", "1000000".to_string())])
        .await
        .unwrap();
    let (status, r) = stack
        .host
        .send("POST", "/actions/setup", "{}")
        .await
        .unwrap();
    assert_eq!(status, 200, "{r}");
    stack
        .graph
        .write("MATCH (a:Account {id: 'ACC-MAIN'}) SET a.balance = 1000000000.0")
        .await
        .unwrap();
    let ids = stack
        .graph
        .create_approved_orders(&format!("FAULT-{prefix}"), n, 10.0)
        .await
        .unwrap();
    // A batch of orders outside the test's first, once the test's exist: a fresh Neo4j
    // plans the chunk statement the first time it runs it and again once the graph's
    // statistics have moved (measured: two chunks of 5 took 1.5 s on a cold server, 0.3 s
    // for eight after), and these tests time chunks out after 1 s. The faults under test
    // are the graph's, not a cold plan cache.
    let warm = stack
        .graph
        .create_approved_orders(&format!("WARM-{prefix}"), 10, 10.0)
        .await
        .unwrap();
    let (status, r) = stack
        .host
        .send(
            "POST",
            EXECUTE,
            &json!({"entity_ids": warm, "options": {"chunk_size": 5, "max_concurrent": 2}})
                .to_string(),
        )
        .await
        .unwrap();
    assert_eq!(status, 200, "{r}");
    (stack, ids)
}

/// The SSE events of a streamed execution, as they arrive; `on_progress(n)` runs after
/// the n-th `action_progress`. Returns the events and when `done` arrived.
async fn stream_batch(
    host_url: &str,
    body: Value,
    mut on_progress: impl FnMut(usize),
) -> (Vec<Value>, Instant) {
    let mut response = auth::client(auth::ADMIN)
        .post(format!("{host_url}{EXECUTE}"))
        .header("accept", "text/event-stream")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let mut buffer = String::new();
    let mut events = Vec::new();
    let mut progress = 0;
    while let Some(chunk) = response.chunk().await.unwrap() {
        buffer.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buffer.find("\n\n") {
            let frame: String = buffer.drain(..end + 2).collect();
            let Some(data) = frame.lines().find_map(|l| l.strip_prefix("data: ")) else {
                continue;
            };
            let event: Value = serde_json::from_str(data).unwrap();
            if event["type"] == "action_progress" {
                progress += 1;
                on_progress(progress);
            }
            let done = event["type"] == "done";
            events.push(event);
            if done {
                return (events, Instant::now());
            }
        }
    }
    panic!("the stream ended without `done`: {events:?}");
}

fn summary_of(events: &[Value]) -> Value {
    events
        .iter()
        .find(|e| e["type"] == "action_complete")
        .map(|e| e["results"].clone())
        .expect("an action_complete event")
}

/// The failure message reported for `id`, for a failed assertion to show.
fn message_for(summary: &Value, id: &str) -> String {
    summary["failures"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|o| o["entity_id"] == id)
        .map_or_else(String::new, |o| o["error"].to_string())
}

/// Each order's reported outcome: "succeeded" or the failure reason.
fn reported(summary: &Value) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for o in summary["successes"].as_array().unwrap() {
        out.insert(
            o["entity_id"].as_str().unwrap().to_string(),
            "succeeded".into(),
        );
    }
    for o in summary["failures"].as_array().unwrap() {
        out.insert(
            o["entity_id"].as_str().unwrap().to_string(),
            o["reason"].as_str().unwrap().to_string(),
        );
    }
    out
}

fn counts(outcomes: &BTreeMap<String, String>) -> BTreeMap<&str, usize> {
    let mut counts = BTreeMap::new();
    for reason in outcomes.values() {
        *counts.entry(reason.as_str()).or_default() += 1;
    }
    counts
}

/// Orders of this run that the graph shows paid, checking none was paid twice.
async fn paid_in_graph(stack: &Stack, prefix: &str) -> BTreeSet<String> {
    let rows = stack
        .graph
        .query(&format!(
            "MATCH (o:PurchaseOrder) WHERE o.id STARTS WITH 'FAULT-{prefix}-' \
             OPTIONAL MATCH (p:Payment)-[:PAYS]->(o) \
             WITH o, count(p) AS payments \
             OPTIONAL MATCH (l:ActionLog {{entity_id: o.id}}) \
             RETURN o.id, o.status, payments, count(l) AS logs"
        ))
        .await
        .unwrap();
    let mut paid = BTreeSet::new();
    for row in rows {
        let id = row[0].as_str().unwrap().to_string();
        let (payments, logs) = (row[2].as_i64().unwrap(), row[3].as_i64().unwrap());
        assert!(payments <= 1 && logs <= 1, "{id} applied twice: {row}");
        if row[1] == "paid" {
            assert_eq!((payments, logs), (1, 1), "{id}: paid without its records");
            paid.insert(id);
        } else {
            assert_eq!(
                (payments, logs),
                (0, 0),
                "{id}: records without the payment"
            );
        }
    }
    paid
}

/// A success was applied; a definite failure was not; an applied payment is reported
/// succeeded or unknown, never failed.
fn assert_truthful(summary: &Value, paid: &BTreeSet<String>, n: usize) {
    let outcomes = reported(summary);
    assert_eq!(outcomes.len(), n, "one outcome per order");
    for (id, outcome) in &outcomes {
        match outcome.as_str() {
            "succeeded" => assert!(paid.contains(id), "{id} reported paid, is not"),
            "unknown" => {}
            reason => assert!(
                !paid.contains(id),
                "{id} reported {reason}, but it was paid: {}",
                message_for(summary, id)
            ),
        }
    }
}

#[tokio::test]
async fn a_graph_frozen_mid_batch_that_resumes_gets_every_outcome_right() {
    let (stack, ids) = stack_with_orders("F", 200).await;
    let body = json!({
        "entity_ids": ids,
        "options": {"chunk_size": 5, "max_concurrent": 4, "chunk_timeout_ms": 1000, "max_retries": 2},
    });
    let graph = &stack.graph;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Instant>();
    let stream = stream_batch(&stack.host.url, body, |n| {
        if n == 40 {
            graph.freeze().unwrap();
            let _ = tx.send(Instant::now());
        }
    });
    // Resumed 2.5 s later: the chunks in flight have timed out by then (1 s), and the
    // action log can still settle them (three reads, the last about 3 s after the freeze).
    let resumer = async {
        let frozen_at = rx.recv().await.expect("froze after 40 outcomes");
        tokio::time::sleep(Duration::from_millis(2500)).await;
        graph.resume().unwrap();
        frozen_at
    };
    let ((events, done_at), frozen_at) = tokio::join!(stream, resumer);
    let frozen_for = done_at.duration_since(frozen_at);
    let summary = summary_of(&events);
    let outcomes = reported(&summary);
    // Let any statement that queued up while frozen run (it must apply nothing).
    tokio::time::sleep(Duration::from_secs(2)).await;
    let paid = paid_in_graph(&stack, "F").await;
    println!(
        "graph frozen for 2.5 s mid-batch: outcomes {:?}; paid in the graph {}; done {:.1} s after the freeze",
        counts(&outcomes),
        paid.len(),
        frozen_for.as_secs_f64()
    );
    assert_truthful(&summary, &paid, 200);
    assert!(paid.len() >= 40, "the first 40 were paid before the freeze");
    assert!(
        !outcomes.values().any(|o| o == "unknown"),
        "the graph answered again in time to settle every chunk: {:?}",
        counts(&outcomes)
    );
    assert_eq!(
        summary["succeeded"].as_u64().unwrap()
            + summary["failed"].as_u64().unwrap()
            + summary["unknown"].as_u64().unwrap(),
        200,
        "{summary}"
    );
}

#[tokio::test]
async fn a_graph_frozen_past_the_reconciliation_leaves_outcomes_unknown_not_failed() {
    let (stack, ids) = stack_with_orders("U", 60).await;
    let body = json!({
        "entity_ids": ids,
        "options": {"chunk_size": 5, "max_concurrent": 2, "chunk_timeout_ms": 400, "max_retries": 0},
    });
    let graph = &stack.graph;
    let started = Instant::now();
    let (events, done_at) = stream_batch(&stack.host.url, body, |n| {
        if n == 10 {
            graph.freeze().unwrap();
        }
    })
    .await;
    let took = done_at.duration_since(started);
    graph.resume().unwrap();
    let summary = summary_of(&events);
    let outcomes = reported(&summary);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let paid = paid_in_graph(&stack, "U").await;
    println!(
        "graph frozen until after the batch: outcomes {:?}; paid {}; batch took {:.1} s",
        counts(&outcomes),
        paid.len(),
        took.as_secs_f64()
    );
    assert_truthful(&summary, &paid, 60);
    assert!(
        outcomes.values().any(|o| o == "unknown"),
        "the in-flight chunks cannot be settled while the graph is frozen: {outcomes:?}"
    );
    assert!(
        outcomes.values().any(|o| o == "not_attempted"),
        "the breaker stopped the batch: {outcomes:?}"
    );
    let unknown = summary["failures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["reason"] == "unknown")
        .unwrap();
    let message = unknown["error"].as_str().unwrap();
    assert!(
        message.contains("idempotency key"),
        "says what to do: {message}"
    );
    assert!(took < Duration::from_secs(15), "took {took:?}");
}

#[tokio::test]
async fn a_graph_killed_mid_batch_ends_the_batch_within_seconds() {
    let (mut stack, ids) = stack_with_orders("K", 1000).await;
    let body = json!({
        "entity_ids": ids,
        "options": {"chunk_size": 1, "max_concurrent": 10},
    });
    let killed_at = std::sync::Arc::new(std::sync::Mutex::new(None));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    let host_url = stack.host.url.clone();
    let stream = async {
        stream_batch(&host_url, body, |n| {
            if n == 100 {
                let _ = tx.send(());
            }
        })
        .await
    };
    // Kill from outside the stream's closure (killing is async).
    let graph = &mut stack.graph;
    let killer = async {
        rx.recv().await;
        graph.kill().await.unwrap();
        *killed_at.lock().unwrap() = Some(Instant::now());
    };
    let ((events, done_at), ()) = tokio::join!(stream, killer);
    let killed_at = killed_at
        .lock()
        .unwrap()
        .expect("killed after 100 outcomes");
    let after_death = done_at.duration_since(killed_at);
    let summary = summary_of(&events);
    let outcomes = reported(&summary);
    println!(
        "graph killed mid-batch (1,000 orders, chunk size 1): done {} ms after the graph died; outcomes {:?}",
        after_death.as_millis(),
        counts(&outcomes)
    );
    assert_eq!(outcomes.len(), 1000);
    assert!(
        after_death < Duration::from_secs(5),
        "done {after_death:?} after the graph died"
    );
    // Only what was in flight when the graph died can be unknown.
    let unknown = outcomes.values().filter(|o| *o == "unknown").count();
    assert!(unknown <= 10, "{unknown} unknown");
    for (id, outcome) in &outcomes {
        assert!(
            ["succeeded", "unknown", "not_attempted", "error"].contains(&outcome.as_str()),
            "{id}: {outcome}"
        );
    }
    assert!(
        counts(&outcomes)["not_attempted"] > 500,
        "{:?}",
        counts(&outcomes)
    );
}

#[tokio::test]
async fn a_non_streamed_batch_against_a_dead_graph_answers_within_seconds() {
    let (mut stack, ids) = stack_with_orders("D", 1000).await;
    stack.graph.kill().await.unwrap();
    let started = Instant::now();
    let (status, r) = stack
        .host
        .send(
            "POST",
            EXECUTE,
            &json!({"entity_ids": ids, "options": {"chunk_size": 1}}).to_string(),
        )
        .await
        .unwrap();
    let took = started.elapsed();
    println!(
        "non-streamed batch of 1,000 against a dead graph: answered in {} ms",
        took.as_millis()
    );
    assert_eq!(status, 200, "{r}");
    assert!(took < Duration::from_secs(5), "took {took:?}");
    assert_eq!(
        (r["succeeded"].as_u64(), r["unknown"].as_u64()),
        (Some(0), Some(0)),
        "{r}"
    );
    let outcomes = reported(&r);
    // The chunks in flight when the breaker opened failed ("not applied: graph
    // unreachable"); the rest were never sent.
    let c = counts(&outcomes);
    let (errors, not_attempted) = (c.get("error").copied().unwrap_or(0), c["not_attempted"]);
    assert!(errors <= 10 && errors + not_attempted == 1000, "{c:?}");
}
