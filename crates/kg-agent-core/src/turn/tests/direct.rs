//! The LLM's own answer, without the summariser: the `answer` intent streams the LLM's
//! deltas as they arrive (falling back to one whole completion when the stream cannot
//! start, and always for `/chat`), is cut between pulls when the client leaves or the
//! deadline passes; a ReAct step that answers without any tool is the answer itself.

use super::fakes::{Say, World, actor};
use super::{body, last_turn, run, world_conversation};
use crate::events::{Event, StreamState};
use crate::turn::deadline::Deadline;
use crate::turn::{CANCELLED_ROUTE, Settings, TurnResult, turn};
use kg_http::ApiError;
use kg_wit::kg::router::router::Intent;

const HELLO: &str = "Hello! Ask me about suppliers.";

fn contents(world: &World) -> Vec<String> {
    world
        .sink
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Content(text) => Some(text.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_direct_answer_streams_the_llm_s_own_deltas_as_they_arrive() {
    let mut world = World::new(Intent::Answer, vec![Say::Text(HELLO)], true);
    let result = run(&mut world, "hello", 10).unwrap();
    // Each delta is its own event, in order, after content_start.
    assert_eq!(
        contents(&world),
        ["Hello! ", "Ask ", "me ", "about ", "suppliers."]
    );
    let kinds = world.sink.kinds();
    let start = kinds.iter().position(|k| *k == "content_start").unwrap();
    assert_eq!(kinds[start + 1], "content");
    assert_eq!(kinds.iter().filter(|k| **k == "content_start").count(), 1);
    assert_eq!(result.answer, HELLO);
    // The streamed response's own model and usage, from one LLM call (no summariser).
    assert_eq!(result.model_used.as_deref(), Some("fake-model-streamed"));
    assert_eq!((result.prompt_tokens, result.completion_tokens), (10, 2));
    assert_eq!(world.model.calls, 1);
    assert!(world.model.pulls.get() > 5);
    assert!(world.summariser.requests.is_empty());
    let Some(Event::Completed(completed)) = world.sink.events.last() else {
        panic!("{kinds:?}");
    };
    assert_eq!(completed.answer, HELLO);
    assert_eq!(last_turn(&world, &result.conversation_id).content, HELLO);
}

#[test]
fn chat_json_and_a_stream_that_cannot_start_get_one_whole_completion() {
    for (streaming, streams) in [(false, true), (true, false)] {
        let mut world = World::new(Intent::Answer, vec![Say::Text(HELLO)], streaming);
        world.model.streams = streams;
        let result = run(&mut world, "hello", 10).unwrap();
        assert_eq!(contents(&world), [HELLO], "streaming {streaming}");
        assert_eq!(result.answer, HELLO);
        assert_eq!(result.model_used.as_deref(), Some("fake-model"));
        assert_eq!(world.model.calls, 1);
        assert_eq!(world.model.pulls.get(), 0);
    }
}

#[test]
fn an_llm_that_fails_while_streaming_is_reported_once_and_not_called_again() {
    let mut world = World::new(Intent::Answer, vec![Say::Fail], true);
    run(&mut world, "hello", 10).unwrap();
    // Its retries happened inside the call: no second call, no empty answer begun.
    assert_eq!(world.model.calls, 1);
    assert!(!world.sink.kinds().contains(&"content_start"));
    let Some(Event::Failure { code, detail, .. }) = world.sink.events.last() else {
        panic!("{:?}", world.sink.kinds());
    };
    assert_eq!(code, "llm_unavailable");
    assert_eq!(detail["attempts"], 3);
}

#[test]
fn a_client_that_leaves_mid_answer_stops_the_stream_at_once() {
    let mut world = World::new(Intent::Answer, vec![Say::Text(HELLO)], true);
    // conversation_id, thinking, route, content_start, content: gone after the first
    // delta.
    world.sink.leave_after = Some(5);
    let e = run(&mut world, "hello", 10).unwrap_err();
    assert_eq!(e.code, "client_gone");
    // The fake stream asserts it is not pulled after the client left: a quiet pull and
    // the first word, then nothing; no other LLM call.
    assert_eq!(world.model.pulls.get(), 2);
    assert_eq!(world.model.calls, 1);
    assert_eq!(contents(&world), ["Hello! "]);
    assert_eq!(
        last_turn(&world, &world_conversation(&world))
            .route
            .as_deref(),
        Some(CANCELLED_ROUTE)
    );
}

fn run_with_deadline(world: &mut World, ms: u64) -> Result<TurnResult, ApiError> {
    let deadline = Deadline {
        ms,
        started_ms: world.clock.1.get(),
    };
    world.model.stop_at_ms = deadline.end_ms();
    turn(
        &body("hello", None),
        &Settings {
            max_steps: 10,
            deadline,
        },
        &actor(true),
        &mut world.ports(),
    )
}

#[test]
fn the_deadline_cuts_a_direct_answer_between_pulls() {
    let mut world = World::new(Intent::Answer, vec![Say::Text(HELLO)], true);
    // Pulls take 100 ms: quiet, "Hello! ", quiet — then the 250 ms deadline has passed.
    world.model.pull_ms = 100;
    run_with_deadline(&mut world, 250).unwrap();
    assert_eq!(world.model.pulls.get(), 3);
    assert_eq!(contents(&world), ["Hello! "]);
    let mut state = StreamState::default();
    let frames: Vec<(&str, serde_json::Value)> = world
        .sink
        .events
        .iter()
        .chain([&Event::Done])
        .flat_map(|e| state.frames(e, "2026-01-01T00:00:00Z"))
        .collect();
    let kinds: Vec<&str> = frames.iter().map(|(k, _)| *k).collect();
    assert_eq!(kinds[kinds.len() - 3..], ["error", "completed", "done"]);
    assert_eq!(frames[frames.len() - 3].1["code"], "turn_deadline_exceeded");
}

#[test]
fn a_react_step_that_needs_no_tool_is_the_answer_without_a_summariser_call() {
    for streaming in [true, false] {
        let mut world = World::new(
            Intent::Query,
            vec![Say::Text("ACME is SUP-001.")],
            streaming,
        );
        let result = run(&mut world, "who is ACME?", 10).unwrap();
        assert_eq!(result.answer, "ACME is SUP-001.");
        // Streamed as the step's deltas arrive, else whole when the step ends.
        let expected: &[&str] = if streaming {
            &["ACME ", "is ", "SUP-001."]
        } else {
            &["ACME is SUP-001."]
        };
        assert_eq!(contents(&world), expected);
        assert_eq!(world.model.calls, 1);
        assert_eq!(result.steps, 1);
        assert!(world.summariser.requests.is_empty());
        assert!(result.sources.is_empty());
    }
    // A blank answer is no answer: the summariser writes one.
    let mut world = World::new(Intent::Query, vec![Say::Text("  ")], true);
    let result = run(&mut world, "who is ACME?", 10).unwrap();
    assert_eq!(world.summariser.requests.len(), 1);
    assert_eq!(result.answer, "answer from 1 pieces of evidence");
}
