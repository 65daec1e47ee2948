//! A client that disconnects stops its turn (issue #16 item 2): mid-LLM-call, the pending
//! call is dropped, no further LLM request goes out, and the conversation records the
//! turn as cancelled — at once with `chat_resume_grace_ms` 0, else once the grace period
//! has passed with no resume. Prints how long after the disconnect the cancellation was
//! recorded.

use kg_e2e::llm_stub::{Reply, ScriptedLlm, call, text};
use kg_e2e::{Stack, auth};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// Reads the stream until `ready()` holds; returns what was read.
async fn read_until(response: &mut reqwest::Response, ready: impl Fn() -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut seen = String::new();
    while !ready() {
        assert!(Instant::now() < deadline, "never ready; read: {seen}");
        match tokio::time::timeout(Duration::from_millis(20), response.chunk()).await {
            Ok(Ok(Some(bytes))) => seen.push_str(&String::from_utf8_lossy(&bytes)),
            Ok(Ok(None)) => panic!("the stream ended early: {seen}"),
            Ok(Err(e)) => panic!("the stream failed: {e}; read: {seen}"),
            Err(_) => {}
        }
    }
    seen
}

fn conversation_of(stream: &str) -> String {
    stream
        .split("\n\n")
        .filter_map(|frame| frame.lines().find_map(|l| l.strip_prefix("data: ")))
        .filter_map(|d| serde_json::from_str::<Value>(d).ok())
        .find(|e| e["type"] == "conversation_id")
        .and_then(|e| e["id"].as_str().map(str::to_string))
        .expect("a conversation_id event")
}

/// Polls the conversation until its last turn is the cancelled one; how long that took.
async fn cancelled_after(stack: &Stack, conversation: &str, since: Instant) -> Duration {
    while since.elapsed() < Duration::from_secs(10) {
        let (status, c) = stack
            .host
            .get(&format!("/conversations/{conversation}"))
            .await
            .unwrap();
        let last = c["turns"].as_array().and_then(|t| t.last()).cloned();
        if status == 200 && last.as_ref().is_some_and(|t| t["route"] == "cancelled") {
            return since.elapsed();
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    panic!("the conversation never recorded the cancelled turn");
}

/// A turn whose client leaves during its second (3 s) LLM call, with `grace_ms`; checks
/// that no LLM request goes out after that and returns how long the cancellation took.
async fn disconnect_during_an_llm_call(grace_ms: u64) -> Duration {
    let llm = ScriptedLlm::start().await;
    llm.then([
        call("search_instances", json!({"search_term": "ACME"})),
        // The second reasoning step is slow: the client leaves while it is pending.
        Reply::Slow(
            Duration::from_secs(3),
            Box::new(call("search_instances", json!({"search_term": "BETA"}))),
        ),
        text("ACME and BETA."),
        text("ACME and BETA are suppliers."),
    ]);
    let mut variables = llm.variables();
    variables.push(("chat_resume_grace_ms", grace_ms.to_string()));
    let stack = Stack::start_with(&variables).await.unwrap();
    let mut response = reqwest::Client::new()
        .post(format!("{}/chat/stream", stack.host.url))
        .bearer_auth(auth::ADMIN)
        .body(
            json!({"message": "Which orders do ACME and BETA have?", "routing_mode": "rule"})
                .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let seen = read_until(&mut response, || llm.requests().len() >= 2).await;
    let conversation = conversation_of(&seen);

    drop(response);
    let left = Instant::now();
    let recorded = cancelled_after(&stack, &conversation, left).await;
    println!("grace {grace_ms} ms: disconnect to cancelled turn recorded: {recorded:?}");

    // Past when the slow answer would have come and the next step gone out.
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(
        llm.requests().len(),
        2,
        "an LLM request went out after the client disconnected"
    );
    let (_, c) = stack
        .host
        .get(&format!("/conversations/{conversation}"))
        .await
        .unwrap();
    let turns = c["turns"].as_array().unwrap();
    assert_eq!(turns.last().unwrap()["route"], "cancelled", "{c}");
    assert_eq!(turns.last().unwrap()["role"], "assistant", "{c}");
    recorded
}

#[tokio::test]
async fn a_client_that_disconnects_during_an_llm_call_stops_the_turn() {
    let recorded = disconnect_during_an_llm_call(0).await;
    // Seen within the 20 ms the pending call checks the client, plus the KV writes and
    // this test's polling.
    assert!(recorded < Duration::from_millis(500), "{recorded:?}");
}

#[tokio::test]
async fn with_a_grace_period_and_no_resume_the_turn_stops_once_it_has_passed() {
    let recorded = disconnect_during_an_llm_call(1_000).await;
    // Not before the grace has run out; then as fast as with no grace (the turn reads
    // the attach mark at most every 500 ms, but looks again before giving up).
    assert!(recorded >= Duration::from_millis(1_000), "{recorded:?}");
    assert!(recorded < Duration::from_millis(1_500), "{recorded:?}");
}

#[tokio::test]
async fn a_resuming_reader_holds_the_turn_and_once_it_leaves_the_grace_runs_again() {
    let llm = ScriptedLlm::start().await;
    llm.then([
        call("search_instances", json!({"search_term": "ACME"})),
        Reply::Slow(
            Duration::from_secs(8),
            Box::new(call("search_instances", json!({"search_term": "BETA"}))),
        ),
        text("ACME and BETA."),
        text("ACME and BETA are suppliers."),
    ]);
    let mut variables = llm.variables();
    variables.push(("chat_resume_grace_ms", "1000".to_string()));
    let stack = Stack::start_with(&variables).await.unwrap();
    let mut response = reqwest::Client::new()
        .post(format!("{}/chat/stream", stack.host.url))
        .bearer_auth(auth::ADMIN)
        .body(
            json!({"message": "Which orders do ACME and BETA have?", "routing_mode": "rule"})
                .to_string(),
        )
        .send()
        .await
        .unwrap();
    let turn = response.headers()["x-turn-id"]
        .to_str()
        .unwrap()
        .to_string();
    let seen = read_until(&mut response, || llm.requests().len() >= 2).await;
    let conversation = conversation_of(&seen);
    drop(response);
    let cut = Instant::now();

    // A reader resumes within the grace and stays past it: the turn keeps running.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut reader = reqwest::Client::new()
        .get(format!("{}/chat/stream/{turn}", stack.host.url))
        .bearer_auth(auth::ADMIN)
        .send()
        .await
        .unwrap();
    assert_eq!(reader.status(), 200);
    let until = Instant::now() + Duration::from_millis(1_500);
    while Instant::now() < until {
        let _ = tokio::time::timeout(Duration::from_millis(50), reader.chunk()).await;
    }
    let (_, c) = stack
        .host
        .get(&format!("/conversations/{conversation}"))
        .await
        .unwrap();
    let last = c["turns"].as_array().unwrap().last().unwrap().clone();
    assert_ne!(
        last["route"], "cancelled",
        "cancelled with a reader attached: {c}"
    );
    println!(
        "reader attached from 0.3 s to {:?} after the cut",
        cut.elapsed()
    );

    // The reader leaves too: once its last mark (refreshed every second) is older than
    // the grace and than 3 s (a mark's least hold), the turn cancels, and the pending
    // call is dropped.
    drop(reader);
    let left = Instant::now();
    let recorded = cancelled_after(&stack, &conversation, left).await;
    println!("reader gone to cancelled turn recorded: {recorded:?}");
    assert!(recorded > Duration::from_millis(1_500), "{recorded:?}");
    assert!(recorded < Duration::from_millis(3_500), "{recorded:?}");
    // Past when the slow answer would have come and the next step gone out.
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert_eq!(
        llm.requests().len(),
        2,
        "an LLM request went out after the cancel"
    );
}
