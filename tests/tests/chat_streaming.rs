//! True token streaming end to end: the LLM streams the answer (first token after 200 ms,
//! then one every 100 ms) and each token reaches the client as a `content` event while
//! the LLM is still writing, not once its call is over.

use kg_e2e::llm_stub::streamed::{Step, StreamingLlm, timed_chat_stream};
use kg_e2e::{Stack, auth, events};
use serde_json::{Value, json};
use std::time::Duration;

const FIRST_TOKEN: Duration = Duration::from_millis(200);
const BETWEEN: Duration = Duration::from_millis(100);

#[tokio::test]
async fn answer_tokens_reach_the_client_as_the_llm_writes_them() {
    let llm = StreamingLlm::start().await.unwrap();
    let stack = Stack::start_with(&llm.variables()).await.unwrap();
    let tokens: Vec<String> = [
        "There ",
        "are ",
        "10 ",
        "suppliers; ",
        "SUP-007 ",
        "is blocked.",
    ]
    .iter()
    .map(|t| t.to_string())
    .collect();
    llm.then([
        Step::Text("draft".into()),
        Step::Tokens {
            first_token: FIRST_TOKEN,
            between: BETWEEN,
            tokens: tokens.clone(),
        },
    ]);
    let timed = timed_chat_stream(
        &stack.host.url,
        auth::ADMIN,
        &json!({"message": "How many suppliers are there?", "routing_mode": "rule"}),
    )
    .await
    .unwrap();
    let events: Vec<Value> = timed.iter().map(|(_, e)| e.clone()).collect();
    events::check_stream(&events);
    // The summariser asked for a stream.
    assert_eq!(llm.requests()[1]["stream"], true, "{:?}", llm.requests()[1]);

    let contents: Vec<_> = timed
        .iter()
        .filter(|(_, e)| e["type"] == "content")
        .collect();
    let text: String = contents
        .iter()
        .map(|(_, e)| e["content"].as_str().unwrap())
        .collect();
    assert_eq!(text, tokens.concat());
    let completed = events.iter().find(|e| e["type"] == "completed").unwrap();
    assert_eq!(completed["answer"], text);

    let timing = &llm.timings()[0];
    let (first_token, last_token) = (timing.first_token.unwrap(), timing.last_token.unwrap());
    let first_content = contents[0].0;
    // Forwarded while the LLM was still writing: the first content came before the last
    // token was even written (5 × 100 ms later), and every token was its own event.
    assert!(
        first_content < last_token,
        "first content {:?} after the LLM's last token",
        first_content.duration_since(first_token)
    );
    assert!(
        contents.len() >= tokens.len() - 1,
        "{} content events",
        contents.len()
    );
    // And promptly: little more than the LLM's own first-token time.
    let lag = first_content.duration_since(first_token);
    let from_call = first_content.duration_since(timing.received.unwrap());
    eprintln!(
        "first content {lag:?} after the LLM's first token, {from_call:?} after the summariser's call reached the LLM"
    );
    assert!(lag < Duration::from_millis(50), "lag {lag:?}");
    assert!(
        from_call < FIRST_TOKEN + Duration::from_millis(50),
        "{from_call:?}"
    );
}

/// A summariser call still waiting for its first token is cut when the turn's deadline
/// passes (the answer stream is pulled in short waits, and the turn looks between them),
/// not when the LLM finally writes.
#[tokio::test]
async fn the_deadline_cuts_a_summariser_call_waiting_for_its_first_token() {
    let llm = StreamingLlm::start().await.unwrap();
    let mut variables = llm.variables();
    variables.push(("agent_turn_deadline_ms", "800".to_string()));
    let stack = Stack::start_with(&variables).await.unwrap();
    llm.then([
        Step::Text("draft".into()),
        Step::Tokens {
            first_token: Duration::from_secs(4),
            between: BETWEEN,
            tokens: vec!["too ".into(), "late".into()],
        },
    ]);
    let started = std::time::Instant::now();
    let timed = timed_chat_stream(
        &stack.host.url,
        auth::ADMIN,
        &json!({"message": "How many suppliers are there?", "routing_mode": "rule"}),
    )
    .await
    .unwrap();
    let events: Vec<Value> = timed.iter().map(|(_, e)| e.clone()).collect();
    events::check_stream(&events);
    let (at, error) = timed
        .iter()
        .find(|(_, e)| e["type"] == "error")
        .expect("an error event");
    assert_eq!(error["code"], "turn_deadline_exceeded", "{error}");
    let after = at.duration_since(started);
    eprintln!("deadline 800 ms: the stream's error came {after:?} after the request");
    assert!(after < Duration::from_millis(2500), "{after:?}");
    assert!(
        !events
            .iter()
            .any(|e| e["type"] == "content" && e["content"] == "late")
    );
}
