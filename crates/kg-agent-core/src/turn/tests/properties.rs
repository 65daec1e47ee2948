//! Property tests of whole turns over random LLM scripts, step limits and departure
//! points, for questions and for direct (streamed) answers (seed 002 properties 5, 8–10,
//! and the stream's order rules):
//! - the LLM is called at most `max_steps` times, and never after the client left;
//! - every `tool_call` has its `tool_result` (same id, same step), right after it;
//! - `conversation_id` comes first and `completed` (or a failure's `error`) last; framed
//!   as a stream, `done` is the last frame and there is exactly one;
//! - steps never go back; `content` only after `content_start`; a `content_start` that
//!   resets comes only after content was shown.

use super::fakes::{Say, World};
use super::run;
use crate::events::{Event, StreamState};
use kg_wit::kg::router::router::Intent;
use proptest::prelude::*;
use serde_json::json;

fn say() -> impl Strategy<Value = Say> {
    prop_oneof![
        3 => proptest::collection::vec(
            prop_oneof![Just("search_instances"), Just("get_instance_neighbors"), Just("no_such_tool")],
            1..4
        )
        .prop_map(|names| Say::Tools(names.into_iter().map(|n| (n, json!({}))).collect())),
        1 => Just(Say::Text("an answer")),
        1 => Just(Say::Preface("let me look ", vec![("search_instances", json!({}))])),
        1 => Just(Say::Fail),
    ]
}

fn check_order(events: &[Event]) -> Result<(), TestCaseError> {
    prop_assert!(matches!(events.first(), Some(Event::ConversationId(_))));
    let mut step = 0;
    let mut content_started = false;
    for (i, e) in events.iter().enumerate() {
        match e {
            Event::ToolCall { step: s, id, .. } => {
                prop_assert!(*s >= step);
                step = *s;
                // Its result follows it directly.
                let next = events.get(i + 1);
                prop_assert!(
                    matches!(next, Some(Event::ToolResult { step: rs, id: rid, .. }) if rs == s && rid == id),
                    "tool_call {} without its tool_result: {:?}",
                    id,
                    next
                );
            }
            Event::ToolResult { id, .. } => {
                let previous = i.checked_sub(1).map(|j| &events[j]);
                let after_its_call =
                    matches!(previous, Some(Event::ToolCall { id: cid, .. }) if cid == id);
                prop_assert!(
                    after_its_call,
                    "tool_result {} not right after its call",
                    id
                );
            }
            Event::ContentStart => content_started = true,
            // A reset discards content shown before: there was some.
            Event::ContentReset => prop_assert!(content_started, "reset before any content"),
            Event::Content(_) => prop_assert!(content_started),
            Event::Completed(_) | Event::Failure { .. } => {
                prop_assert_eq!(i, events.len() - 1, "completed/error is not last");
            }
            _ => {}
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn turns_keep_the_loop_and_stream_invariants(
        script in proptest::collection::vec(say(), 0..12),
        max_steps in 1u32..8,
        streaming in any::<bool>(),
        leave_after in proptest::option::of(1usize..40),
        direct in any::<bool>(),
    ) {
        // A direct answer (intent `answer`) is one LLM call, streamed when the sink streams.
        let intent = if direct { Intent::Answer } else { Intent::Query };
        let mut world = World::new(intent, script, streaming);
        world.model.then = Say::Tools(vec![("search_instances", json!({}))]);
        world.sink.leave_after = leave_after;
        // The fakes panic if any LLM, tool or summary call starts after the client left.
        let outcome = run(&mut world, "who supplies ACME?", max_steps);
        prop_assert!(world.model.calls <= max_steps);
        let events = &world.sink.events;
        if world.sink.gone.get() {
            // Unless the client left on the very last event, the turn says it was cut short.
            if let Err(e) = &outcome {
                prop_assert_eq!(e.code.as_str(), "client_gone");
            }
        } else {
            check_order(events)?;
            if let (Ok(result), Some(Event::Completed(_))) = (&outcome, events.last()) {
                prop_assert!(result.steps <= max_steps);
                if !direct {
                    prop_assert_eq!(result.steps, world.model.calls);
                }
            }
        }
        let calls = events.iter().filter(|e| matches!(e, Event::ToolCall { .. })).count();
        let results = events.iter().filter(|e| matches!(e, Event::ToolResult { .. })).count();
        // A departure may fall between a call and its result (the result is not seen).
        prop_assert!(calls == results || (world.sink.gone.get() && calls == results + 1));

        // Framed as a stream (with the dispatcher's closing `done`), `done` is last and
        // `completed` comes exactly once, just before it.
        let mut state = StreamState::default();
        let mut frames: Vec<&str> = Vec::new();
        for e in events.iter().chain(std::iter::once(&Event::Done)) {
            frames.extend(state.frames(e, "2026-01-01T00:00:00Z").into_iter().map(|(k, _)| k));
        }
        prop_assert_eq!(frames.last(), Some(&"done"));
        prop_assert_eq!(frames.iter().filter(|k| **k == "done").count(), 1);
        prop_assert_eq!(frames.iter().filter(|k| **k == "completed").count(), 1);
        prop_assert_eq!(frames[frames.len() - 2], "completed");
    }
}
