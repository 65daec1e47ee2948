//! A client that disconnects stops its turn (issue #16 item 2): mid-LLM-call, the pending
//! call is dropped, no further LLM request goes out, and the conversation records the
//! turn as cancelled — at once with `chat_resume_grace_ms` 0, else once the grace period
//! has passed with no resume. Prints how long after the disconnect the cancellation was
//! recorded.

use kg_e2e::chat_client::{last_turn, resume, stream, turn_id};
use kg_e2e::llm_stub::{Reply, ScriptedLlm, call, text};
use kg_e2e::sse::{self, read_until};
use kg_e2e::{Stack, auth};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

fn question() -> Value {
    json!({"message": "Which orders do ACME and BETA have?", "routing_mode": "rule"})
}

/// A search, then a second reasoning step that takes `slow` (the client leaves while it is
/// pending), then the draft and the answer.
fn script(llm: &ScriptedLlm, slow: Duration) {
    llm.then([
        call("search_instances", json!({"search_term": "ACME"})),
        Reply::Slow(
            slow,
            Box::new(call("search_instances", json!({"search_term": "BETA"}))),
        ),
        text("ACME and BETA."),
        text("ACME and BETA are suppliers."),
    ]);
}

/// Polls the conversation until its last turn is `recorded`; how long after `since`.
async fn recorded_after(
    stack: &Stack,
    conversation: &str,
    since: Instant,
    recorded: impl Fn(&Value) -> bool,
) -> Duration {
    loop {
        let last = last_turn(&stack.host, conversation).await;
        if recorded(&last) {
            return since.elapsed();
        }
        assert!(
            since.elapsed() < Duration::from_secs(10),
            "never recorded: {last}"
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// Polls the conversation until its last turn is the cancelled one; how long that took.
async fn cancelled_after(stack: &Stack, conversation: &str, since: Instant) -> Duration {
    recorded_after(stack, conversation, since, |last| {
        last["route"] == "cancelled"
    })
    .await
}

/// A turn whose client leaves during its second (3 s) LLM call, with `grace_ms`; checks
/// that no LLM request goes out after that and returns how long the cancellation took.
async fn disconnect_during_an_llm_call(grace_ms: u64) -> Duration {
    let llm = ScriptedLlm::start().await;
    script(&llm, Duration::from_secs(3));
    let grace = grace_ms.to_string();
    let stack = Stack::with_stubs(&[llm.variables()], &[("chat_resume_grace_ms", &grace)]).await;
    let mut response = stream(&stack.host.url, auth::ADMIN, &question())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let seen = read_until(&mut response, |_| llm.requests().len() >= 2).await;
    let conversation = sse::conversation_of(&sse::events(&seen));

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
    let last = last_turn(&stack.host, &conversation).await;
    assert_eq!(last["route"], "cancelled", "{last}");
    assert_eq!(last["role"], "assistant", "{last}");
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
    script(&llm, Duration::from_secs(8));
    let stack = Stack::with_stubs(&[llm.variables()], &[("chat_resume_grace_ms", "1000")]).await;
    let mut response = stream(&stack.host.url, auth::ADMIN, &question())
        .send()
        .await
        .unwrap();
    let turn = turn_id(&response);
    let seen = read_until(&mut response, |_| llm.requests().len() >= 2).await;
    let conversation = sse::conversation_of(&sse::events(&seen));
    drop(response);
    let cut = Instant::now();

    // A reader resumes within the grace and stays past it: the turn keeps running.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut reader = resume(&stack.host.url, auth::ADMIN, &turn, None)
        .send()
        .await
        .unwrap();
    assert_eq!(reader.status(), 200);
    let until = Instant::now() + Duration::from_millis(1_500);
    while Instant::now() < until {
        let _ = tokio::time::timeout(Duration::from_millis(50), reader.chunk()).await;
    }
    let last = last_turn(&stack.host, &conversation).await;
    assert_ne!(
        last["route"], "cancelled",
        "cancelled with a reader attached: {last}"
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

/// The newest conversation of the host's caller (`GET /conversations`), once it has one.
async fn newest_conversation(stack: &Stack) -> String {
    let since = Instant::now();
    loop {
        let (_, listed) = stack.host.get("/conversations").await.unwrap();
        if let Some(id) = listed["conversations"][0]["id"].as_str() {
            return id.to_string();
        }
        assert!(since.elapsed() < Duration::from_secs(10), "{listed}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Sends `POST /chat` and leaves (drops the connection) once `left` LLM requests were made.
async fn ask_and_leave(stack: &Stack, llm: &ScriptedLlm, left: usize) -> Instant {
    let url = stack.host.url.clone();
    let request = tokio::spawn(async move {
        reqwest::Client::new()
            .post(format!("{url}/chat"))
            .bearer_auth(auth::ADMIN)
            .header("content-type", "application/json")
            .body(question().to_string())
            .send()
            .await
    });
    let since = Instant::now();
    while llm.requests().len() < left {
        assert!(since.elapsed() < Duration::from_secs(20), "no LLM request");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    request.abort();
    let _ = request.await;
    Instant::now()
}

/// `/chat` answers JSON only once the turn is over: its handler returns the whole response,
/// and wasi-http tells a component nothing about a client that left before it sets the
/// response. So a departed `/chat` client does not stop the turn (pinned here): it runs to
/// its answer, making the calls it would have made, and the conversation records it.
#[tokio::test]
async fn a_json_chat_whose_client_leaves_runs_to_its_answer_and_is_recorded() {
    let llm = ScriptedLlm::start().await;
    script(&llm, Duration::from_millis(1_500));
    let stack = Stack::with_stubs(&[llm.variables()], &[]).await;
    let left = ask_and_leave(&stack, &llm, 2).await;
    let conversation = newest_conversation(&stack).await;
    let answered = recorded_after(&stack, &conversation, left, |last| {
        last["role"] == "assistant"
    })
    .await;
    println!("/chat client gone to answer recorded: {answered:?}");
    let last = last_turn(&stack.host, &conversation).await;
    assert_eq!(last["content"], "ACME and BETA are suppliers.", "{last}");
    assert_ne!(last["route"], "cancelled", "{last}");
    // Every scripted call went out, two of them after the client left.
    assert_eq!(llm.requests().len(), 4);
}

/// What bounds such a turn is its deadline (`agent_turn_deadline_ms`): with the client
/// gone and LLM steps of 300 ms that never end, the turn stops at 1 s, is recorded as
/// stopped by the deadline, and makes no LLM call after it.
///
/// Each step's tool reads the action catalog, not the graph: the deadline cuts a pending
/// LLM call but not a graph query already running (that one is bounded by
/// `neo4j_query_timeout_ms`), and a fresh Neo4j server's first queries, planned cold while
/// the other tests start theirs on two cores, took 0.7–8 s in CI — the turn then stopped
/// late after one step, which says nothing about the deadline.
#[tokio::test]
async fn a_json_chat_whose_client_leaves_is_bounded_by_the_turn_deadline() {
    const DEADLINE_MS: u64 = 1_000;
    let llm = ScriptedLlm::start().await;
    llm.then((0..10).map(|i| {
        Reply::Slow(
            Duration::from_millis(300),
            Box::new(call(
                "list_available_actions",
                json!({"entity_type": if i % 2 == 0 { "PurchaseOrder" } else { "Supplier" }}),
            )),
        )
    }));
    let deadline = DEADLINE_MS.to_string();
    let stack =
        Stack::with_stubs(&[llm.variables()], &[("agent_turn_deadline_ms", &deadline)]).await;
    let started = Instant::now();
    ask_and_leave(&stack, &llm, 1).await;
    let conversation = newest_conversation(&stack).await;
    let stopped = recorded_after(&stack, &conversation, started, |last| {
        last["route"] == "deadline_exceeded"
    })
    .await;
    let calls = llm.requests().len();
    println!(
        "/chat client gone at once: turn stopped by its deadline {stopped:?} after the request, {calls} LLM requests"
    );
    assert!(stopped >= Duration::from_millis(DEADLINE_MS), "{stopped:?}");
    assert!(
        stopped < Duration::from_millis(DEADLINE_MS + 1_000),
        "{stopped:?}"
    );
    assert!((2..=5).contains(&calls), "{calls} LLM requests");
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(
        llm.requests().len(),
        calls,
        "an LLM request after the deadline"
    );
}
