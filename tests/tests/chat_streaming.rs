//! True token streaming end to end: the LLM streams the answer (first token after 200 ms,
//! then one every 100 ms) and each token reaches the client as a `content` event while
//! the LLM is still writing, not once its call is over — the summariser's answer after
//! the tools, and the LLM's own direct answer (small talk). A ReAct step that needs no
//! tool is the answer itself: one LLM call, no summariser, streamed as the step writes it;
//! a step's text that turns out to preface tool calls is reasoning, and the answer's
//! `content_start` resets it.

use kg_e2e::llm_stub::streamed::{Step, StreamingLlm, Timing, timed_chat_stream};
use kg_e2e::{Stack, auth, events};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const FIRST_TOKEN: Duration = Duration::from_millis(200);
const BETWEEN: Duration = Duration::from_millis(100);

fn tokens(words: &[&str]) -> Vec<String> {
    words.iter().map(|t| t.to_string()).collect()
}

/// A ReAct step that calls a tool: the answer then needs the summariser.
fn search() -> Step {
    Step::Tools(vec![(
        "search_instances".into(),
        json!({"search_term": "SUP"}),
    )])
}

/// Streams `message` to the agent as the admin, routed by rule; each event with when it came.
async fn ask(stack: &Stack, message: &str) -> Vec<(Instant, Value)> {
    timed_chat_stream(
        &stack.host.url,
        auth::ADMIN,
        &json!({"message": message, "routing_mode": "rule"}),
    )
    .await
    .unwrap()
}

/// Asks `message` under a turn deadline and returns how long after the request the
/// stream's `turn_deadline_exceeded` error came, and the stream's events (schema-checked).
async fn deadline_error(stack: &Stack, message: &str) -> (Duration, Vec<Value>) {
    let started = Instant::now();
    let timed = ask(stack, message).await;
    let events: Vec<Value> = timed.iter().map(|(_, e)| e.clone()).collect();
    events::check_stream(&events);
    let (at, error) = timed
        .iter()
        .find(|(_, e)| e["type"] == "error")
        .expect("an error event");
    assert_eq!(error["code"], "turn_deadline_exceeded", "{error}");
    (at.duration_since(started), events)
}

/// The stream's events checked against the schema, its answer's `content` events (with
/// when each arrived: those after the last `content_start` that resets, as a client
/// keeps them), and their text, which is `completed`'s answer.
fn checked(timed: &[(Instant, Value)]) -> (Vec<(Instant, Value)>, String, Value) {
    let events: Vec<Value> = timed.iter().map(|(_, e)| e.clone()).collect();
    events::check_stream(&events);
    let answer_from = timed
        .iter()
        .rposition(|(_, e)| e["type"] == "content_start" && e["reset"] == true)
        .unwrap_or(0);
    let contents: Vec<(Instant, Value)> = timed[answer_from..]
        .iter()
        .filter(|(_, e)| e["type"] == "content")
        .cloned()
        .collect();
    let text: String = contents
        .iter()
        .map(|(_, e)| e["content"].as_str().unwrap())
        .collect();
    let completed = events
        .iter()
        .find(|e| e["type"] == "completed")
        .unwrap()
        .clone();
    assert_eq!(completed["answer"], text);
    (contents, text, completed)
}

/// The first `content` came while the LLM was still writing (before its last token),
/// every token was its own event, and promptly: little more than the LLM's own
/// first-token time after the call reached it.
fn assert_forwarded_as_written(
    what: &str,
    contents: &[(Instant, Value)],
    timing: &Timing,
    words: usize,
) {
    let (first_token, last_token) = (timing.first_token.unwrap(), timing.last_token.unwrap());
    let first_content = contents[0].0;
    assert!(
        first_content < last_token,
        "{what}: first content {:?} after the LLM's last token",
        first_content.duration_since(first_token)
    );
    assert!(
        contents.len() >= words - 1,
        "{what}: {} content events",
        contents.len()
    );
    let lag = first_content.duration_since(first_token);
    let from_call = first_content.duration_since(timing.received.unwrap());
    eprintln!(
        "{what}: first content {lag:?} after the LLM's first token, {from_call:?} after its call reached the LLM"
    );
    assert!(lag < Duration::from_millis(50), "{what}: lag {lag:?}");
    assert!(
        from_call < FIRST_TOKEN + Duration::from_millis(50),
        "{what}: {from_call:?}"
    );
}

#[tokio::test]
async fn answer_tokens_reach_the_client_as_the_llm_writes_them() {
    let llm = StreamingLlm::start().await.unwrap();
    let stack = Stack::with_stubs(&[llm.variables()], &[]).await;
    let words = tokens(&[
        "There ",
        "are ",
        "10 ",
        "suppliers; ",
        "SUP-007 ",
        "is blocked.",
    ]);
    llm.then([
        search(),
        Step::Text("draft".into()),
        Step::Tokens {
            first_token: FIRST_TOKEN,
            between: BETWEEN,
            tokens: words.clone(),
        },
    ]);
    let timed = ask(&stack, "How many suppliers are there?").await;
    // The summariser asked for a stream.
    assert_eq!(llm.requests()[2]["stream"], true, "{:?}", llm.requests()[2]);
    let (contents, text, _) = checked(&timed);
    assert_eq!(text, words.concat());
    assert_forwarded_as_written("summariser", &contents, &llm.timings()[0], words.len());
}

/// Small talk: the LLM's own answer, streamed straight from its call (no tools, no
/// summariser), is forwarded token by token.
#[tokio::test]
async fn a_direct_answer_streams_the_llm_s_own_tokens() {
    let llm = StreamingLlm::start().await.unwrap();
    let stack = Stack::with_stubs(&[llm.variables()], &[]).await;
    let words = tokens(&["Hello! ", "Ask ", "me ", "about ", "suppliers."]);
    llm.then([Step::Tokens {
        first_token: FIRST_TOKEN,
        between: BETWEEN,
        tokens: words.clone(),
    }]);
    let timed = ask(&stack, "hello").await;
    let requests = llm.requests();
    assert_eq!(requests.len(), 1, "one LLM call: {requests:?}");
    assert_eq!(requests[0]["stream"], true);
    assert!(
        requests[0].get("tools").is_none(),
        "no tools for small talk"
    );
    let (contents, text, completed) = checked(&timed);
    assert_eq!(text, words.concat());
    assert_eq!(completed["model_used"], "stub");
    assert_eq!(completed["route"]["intent"], "answer");
    assert_eq!(completed["usage"]["total_tokens"], 15);
    assert_forwarded_as_written("direct answer", &contents, &llm.timings()[0], words.len());
}

/// A ReAct step that answers without calling a tool has nothing to ground or cite: its
/// answer is the answer, without a second (summariser) LLM call.
#[tokio::test]
async fn a_question_answered_without_tools_takes_one_llm_call() {
    let llm = StreamingLlm::start().await.unwrap();
    let stack = Stack::with_stubs(&[llm.variables()], &[]).await;
    llm.then([Step::Text("There are 10 suppliers.".into())]);
    let timed = ask(&stack, "How many suppliers are there?").await;
    let (_, text, completed) = checked(&timed);
    assert_eq!(text, "There are 10 suppliers.");
    assert_eq!(completed["steps"], 1);
    assert_eq!(llm.requests().len(), 1, "{:?}", llm.requests());
}

/// A summariser call still waiting for its first token is cut when the turn's deadline
/// passes (the answer stream is pulled in short waits, and the turn looks between them),
/// not when the LLM finally writes.
#[tokio::test]
async fn the_deadline_cuts_a_summariser_call_waiting_for_its_first_token() {
    let llm = StreamingLlm::start().await.unwrap();
    let stack = Stack::with_stubs(&[llm.variables()], &[("agent_turn_deadline_ms", "800")]).await;
    llm.then([
        search(),
        Step::Text("draft".into()),
        Step::Tokens {
            first_token: Duration::from_secs(4),
            between: BETWEEN,
            tokens: tokens(&["too ", "late"]),
        },
    ]);
    let (after, events) = deadline_error(&stack, "How many suppliers are there?").await;
    eprintln!("deadline 800 ms: the stream's error came {after:?} after the request");
    assert!(after < Duration::from_millis(2500), "{after:?}");
    assert!(
        !events
            .iter()
            .any(|e| e["type"] == "content" && e["content"] == "late")
    );
}

/// The same for a direct answer: its own LLM call, still waiting for the first token, is
/// cut at the deadline.
#[tokio::test]
async fn the_deadline_cuts_a_direct_answer_waiting_for_its_first_token() {
    let llm = StreamingLlm::start().await.unwrap();
    let stack = Stack::with_stubs(&[llm.variables()], &[("agent_turn_deadline_ms", "800")]).await;
    llm.then([Step::Tokens {
        first_token: Duration::from_secs(4),
        between: BETWEEN,
        tokens: tokens(&["too ", "late"]),
    }]);
    let (after, events) = deadline_error(&stack, "hello").await;
    eprintln!(
        "deadline 800 ms, direct answer: the stream's error came {after:?} after the request"
    );
    assert!(after < Duration::from_millis(1500), "{after:?}");
    assert!(!events.iter().any(|e| e["type"] == "content"));
}

/// A ReAct step that answers without calling a tool streams its own tokens: the step is
/// the answer (one LLM call, with the tools offered), forwarded as the LLM writes it.
#[tokio::test]
async fn a_react_step_answering_without_tools_streams_its_tokens() {
    let llm = StreamingLlm::start().await.unwrap();
    let stack = Stack::with_stubs(&[llm.variables()], &[]).await;
    let words = tokens(&[
        "There ",
        "are ",
        "10 ",
        "suppliers; ",
        "SUP-007 ",
        "is blocked.",
    ]);
    llm.then([Step::Tokens {
        first_token: FIRST_TOKEN,
        between: BETWEEN,
        tokens: words.clone(),
    }]);
    let timed = ask(&stack, "How many suppliers are there?").await;
    let requests = llm.requests();
    assert_eq!(requests.len(), 1, "one LLM call: {requests:?}");
    assert_eq!(requests[0]["stream"], true);
    assert!(requests[0]["tools"].is_array(), "the step is offered tools");
    let (contents, text, completed) = checked(&timed);
    assert_eq!(text, words.concat());
    assert_eq!(completed["steps"], 1);
    assert_eq!(completed["usage"]["total_tokens"], 15);
    assert!(
        !timed
            .iter()
            .any(|(_, e)| e["type"] == "content_start" && e["reset"] == true)
    );
    assert_forwarded_as_written("ReAct step", &contents, &llm.timings()[0], words.len());
}

/// A step that writes text and then calls tools: the text was streamed as it came, is
/// then shown as the step's reasoning (`thinking`), and the summariser's answer comes
/// after a `content_start` that resets it.
#[tokio::test]
async fn a_preface_to_tool_calls_is_reasoning_and_the_answer_resets_it() {
    let llm = StreamingLlm::start().await.unwrap();
    let stack = Stack::with_stubs(&[llm.variables()], &[]).await;
    let preface = tokens(&["Let ", "me ", "look ", "that ", "up."]);
    let words = tokens(&["There ", "are ", "10 ", "suppliers."]);
    llm.then([
        Step::Preface {
            first_token: FIRST_TOKEN,
            between: BETWEEN,
            tokens: preface.clone(),
            calls: vec![("search_instances".into(), json!({"search_term": "SUP"}))],
        },
        Step::Text("draft".into()),
        Step::Tokens {
            first_token: FIRST_TOKEN,
            between: BETWEEN,
            tokens: words.clone(),
        },
    ]);
    let timed = ask(&stack, "How many suppliers are there?").await;
    let (contents, text, _) = checked(&timed);
    assert_eq!(text, words.concat());
    let kinds: Vec<&str> = timed
        .iter()
        .map(|(_, e)| e["type"].as_str().unwrap())
        .collect();
    // The preface went out while the LLM wrote it, before the tool ran.
    let first_content = kinds.iter().position(|k| *k == "content").unwrap();
    let tool_call = kinds.iter().position(|k| *k == "tool_call").unwrap();
    assert!(first_content < tool_call, "{kinds:?}");
    assert!(timed[first_content].0 < llm.timings()[0].last_token.unwrap());
    let reasoning = timed
        .iter()
        .position(|(_, e)| e["type"] == "thinking" && e["details"] == preface.concat())
        .unwrap_or_else(|| panic!("no thinking with the preface: {kinds:?}"));
    assert!(
        first_content < reasoning && reasoning < tool_call,
        "{kinds:?}"
    );
    assert!(
        timed
            .iter()
            .any(|(_, e)| e["type"] == "content_start" && e["reset"] == true)
    );
    assert_forwarded_as_written(
        "summariser after a preface",
        &contents,
        &llm.timings()[1],
        words.len(),
    );
}
