//! Resumable streams (issue #16 item 3): every event of `/chat/stream` carries the SSE id
//! `<turn>:<seq>`; a client that reconnects with `Last-Event-ID` to `GET
//! /chat/stream/{turn_id}` (or to `POST /chat/stream`) gets what it missed and then the
//! rest, while the turn runs and after it ended; only the turn's owner (or an admin) may;
//! bad ids, someone else's turn and expired events are JSON errors.

use kg_e2e::chat_client::{self, resume, turn_id};
use kg_e2e::llm_stub::{Reply, ScriptedLlm, call, text};
use kg_e2e::sse::{self, frames as parse, read_until};
use kg_e2e::{Stack, auth, events};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

fn ask(stack: &Stack) -> reqwest::RequestBuilder {
    chat_client::stream(
        &stack.host.url,
        auth::ADMIN,
        &json!({"message": "Which orders does ACME have?", "routing_mode": "rule"}),
    )
}

fn script(llm: &ScriptedLlm, slow: Duration) {
    llm.then([
        call("search_instances", json!({"search_term": "ACME"})),
        Reply::Slow(slow, Box::new(text("ACME has orders."))),
        text("ACME has three orders."),
    ]);
}

#[tokio::test]
async fn a_client_that_reconnects_mid_stream_gets_what_it_missed_then_the_rest() {
    let llm = ScriptedLlm::start().await;
    script(&llm, Duration::from_secs(2));
    let stack = Stack::with_stubs(&[llm.variables()], &[]).await;
    let mut first = ask(&stack).send().await.unwrap();
    let turn = turn_id(&first);
    // Read the first connection until the slow reasoning step is pending.
    let seen = read_until(&mut first, |_| llm.requests().len() >= 2).await;
    let early = parse(&seen);
    assert!(early.len() >= 4, "{seen}");
    // Every event so far carries `<turn>:<seq>`, seq counting from 1.
    for (i, (id, _)) in early.iter().enumerate() {
        assert_eq!(id.as_deref(), Some(format!("{turn}:{}", i + 1).as_str()));
    }
    let last_seen = early[2].0.clone().unwrap();

    // A second connection (the same client after a proxy cut it) resumes after event 3
    // while the turn still runs; the first stays open so the turn goes on.
    let (rest_of_first, resumed) = tokio::join!(
        async {
            let mut body = seen.clone();
            while let Some(bytes) = first.chunk().await.unwrap() {
                body.push_str(&String::from_utf8_lossy(&bytes));
            }
            body
        },
        async {
            let response = resume(&stack.host.url, auth::ADMIN, &turn, Some(&last_seen))
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), 200);
            response.text().await.unwrap()
        }
    );
    let all = parse(&rest_of_first);
    let resumed = parse(&resumed);
    events::check_stream(&all.iter().map(|e| e.1.clone()).collect::<Vec<_>>());
    events::check_stream(&resumed.iter().map(|e| e.1.clone()).collect::<Vec<_>>());
    assert_eq!(
        resumed.first().unwrap().0.as_deref(),
        Some(format!("{turn}:4").as_str())
    );
    assert_eq!(
        resumed.as_slice(),
        &all[3..],
        "the resume is the rest of the stream"
    );
    let completed = &resumed[resumed.len() - 2].1;
    assert_eq!(completed["type"], "completed");
    assert_eq!(completed["turn_id"], turn.as_str());
    assert_eq!(completed["answer"], "ACME has three orders.");
}

#[tokio::test]
async fn a_finished_turn_is_replayed_from_any_event_and_only_to_its_owner() {
    let llm = ScriptedLlm::start().await;
    script(&llm, Duration::from_millis(1));
    let stack = Stack::with_stubs(&[llm.variables()], &[]).await;
    let response = ask(&stack).send().await.unwrap();
    let turn = turn_id(&response);
    let all = parse(&response.text().await.unwrap());
    assert_eq!(all.last().unwrap().1["type"], "done");

    // From the start (no header), after the fifth event, and after the last.
    let replayed = resume(&stack.host.url, auth::ADMIN, &turn, None)
        .send()
        .await
        .unwrap();
    assert_eq!(parse(&replayed.text().await.unwrap()), all);
    let fifth = format!("{turn}:5");
    let after_fifth = resume(&stack.host.url, auth::ADMIN, &turn, Some(&fifth))
        .send()
        .await
        .unwrap();
    assert_eq!(parse(&after_fifth.text().await.unwrap()), all[5..]);
    let end = all.last().unwrap().0.clone().unwrap();
    let nothing = resume(&stack.host.url, auth::ADMIN, &turn, Some(&end))
        .send()
        .await
        .unwrap();
    assert!(parse(&nothing.text().await.unwrap()).is_empty());
    // The same with `POST /chat/stream` and the header: no new turn, no LLM call.
    let calls = llm.requests().len();
    let posted = ask(&stack)
        .header("last-event-id", &fifth)
        .send()
        .await
        .unwrap();
    assert_eq!(parse(&posted.text().await.unwrap()), all[5..]);
    assert_eq!(llm.requests().len(), calls);

    // Someone else's turn does not exist for them; bad ids are 400s.
    for (key, path_turn, header, status, code) in [
        (auth::VIEWER, turn.as_str(), None, 404, "not_found"),
        (auth::ADMIN, "t-no-such-turn", None, 404, "not_found"),
        (
            auth::ADMIN,
            turn.as_str(),
            Some("nonsense"),
            400,
            "bad_request",
        ),
        (
            auth::ADMIN,
            turn.as_str(),
            Some("t-other:3"),
            400,
            "bad_request",
        ),
        (auth::ADMIN, "bad%20id", None, 404, "not_found"),
    ] {
        let response = resume(&stack.host.url, key, path_turn, header)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), status, "{path_turn} {header:?}");
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["error"]["code"], code, "{body}");
    }
}

#[tokio::test]
async fn expired_events_are_a_clear_error() {
    let llm = ScriptedLlm::start().await;
    script(&llm, Duration::from_millis(1));
    let stack = Stack::with_stubs(&[llm.variables()], &[("chat_event_retention_s", "1")]).await;
    let response = ask(&stack).send().await.unwrap();
    let turn = turn_id(&response);
    response.text().await.unwrap();
    tokio::time::sleep(Duration::from_millis(2_200)).await;
    let gone = resume(
        &stack.host.url,
        auth::ADMIN,
        &turn,
        Some(&format!("{turn}:2")),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(gone.status().as_u16(), 410);
    let body: Value = gone.json().await.unwrap();
    assert_eq!(body["error"]["code"], "stream_expired", "{body}");
}

#[tokio::test]
async fn a_turn_whose_client_was_cut_off_runs_on_for_a_reader_that_resumes_within_the_grace() {
    let llm = ScriptedLlm::start().await;
    // The slow step outlasts the grace: only the reader's mark keeps the turn going.
    script(&llm, Duration::from_secs(3));
    let stack = Stack::with_stubs(&[llm.variables()], &[("chat_resume_grace_ms", "1000")]).await;
    let mut first = ask(&stack).send().await.unwrap();
    let turn = turn_id(&first);
    let seen = read_until(&mut first, |_| llm.requests().len() >= 2).await;
    let early = parse(&seen);
    let last_seen = early.last().unwrap().0.clone().unwrap();
    let conversation = sse::conversation_of(&sse::events(&seen));

    // The proxy cuts the stream while the slow reasoning step is pending; the client
    // comes back half a second later (within the grace).
    drop(first);
    let cut = Instant::now();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let response = resume(&stack.host.url, auth::ADMIN, &turn, Some(&last_seen))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let resumed = parse(&response.text().await.unwrap());
    println!(
        "cut to end of the resumed stream: {:?} ({} events after {last_seen})",
        cut.elapsed(),
        resumed.len()
    );
    let all: Vec<Value> = early
        .iter()
        .chain(resumed.iter())
        .map(|e| e.1.clone())
        .collect();
    events::check_stream(&all);
    // What the client missed, then the rest, each once and in order.
    let (_, seq) = last_seen.rsplit_once(':').unwrap();
    let seq: u64 = seq.parse().unwrap();
    for (i, (id, _)) in resumed.iter().enumerate() {
        let expected = format!("{turn}:{}", seq + 1 + i as u64);
        assert_eq!(id.as_deref(), Some(expected.as_str()));
    }
    assert_eq!(resumed.last().unwrap().1["type"], "done");
    let completed = &resumed[resumed.len() - 2].1;
    assert_eq!(completed["type"], "completed", "{completed}");
    assert_eq!(completed["answer"], "ACME has three orders.");
    assert!(
        resumed.iter().all(|e| e.1["type"] != "error"),
        "{resumed:?}"
    );
    // The turn completed: every scripted call was made, the answer was remembered.
    assert_eq!(llm.requests().len(), 3);
    let last = chat_client::last_turn(&stack.host, &conversation).await;
    assert_eq!(last["content"], "ACME has three orders.", "{last}");
    assert_ne!(last["route"], "cancelled", "{last}");
}
