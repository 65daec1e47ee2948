//! The turn's deadline, on the fake clock: slow fakes move it on; once the deadline has
//! passed, no model, tool or summariser call starts (the fakes assert it), the stream ends
//! `error` (`turn_deadline_exceeded`), `completed`, `done`, `/chat` gets a 504, and the
//! conversation records the stop. A batch already running is not cut.

use super::fakes::{Say, World, actor};
use super::{body, payment_script, world_conversation};
use crate::events::{Event, StreamState};
use crate::memory;
use crate::turn::deadline::Deadline;
use crate::turn::{DEADLINE_ROUTE, Settings, TurnResult, turn};
use kg_http::ApiError;
use kg_wit::kg::router::router::Intent;
use serde_json::json;

fn run_with_deadline(world: &mut World, message: &str, ms: u64) -> Result<TurnResult, ApiError> {
    let deadline = Deadline {
        ms,
        started_ms: world.clock.1.get(),
    };
    if let Some(end) = deadline.end_ms() {
        world.model.stop_at_ms = Some(end);
    }
    turn(
        &body(message, None),
        &Settings {
            max_steps: 10,
            deadline,
        },
        &actor(true),
        &mut world.ports(),
    )
}

/// The stream's frames as the dispatcher sends them: the turn's events, then `done`.
fn stream_frames(events: &[Event]) -> Vec<(&'static str, serde_json::Value)> {
    let mut state = StreamState::default();
    events
        .iter()
        .chain([&Event::Done])
        .flat_map(|e| state.frames(e, "2026-01-01T00:00:00Z"))
        .collect()
}

fn searches(n: usize) -> Vec<Say> {
    (0..n)
        .map(|i| {
            Say::Tools(vec![(
                "search_instances",
                if i % 2 == 0 {
                    json!({"query": "ACME"})
                } else {
                    json!({"query": "BETA"})
                },
            )])
        })
        .collect()
}

#[test]
fn the_deadline_stops_the_loop_after_the_step_that_crossed_it() {
    let mut world = World::new(Intent::Query, searches(8), true);
    // Steps take 400 ms: the third starts at 800 and ends at 1200, past the deadline.
    world.model.call_ms = 400;
    // Whole completions: a streamed step is cut at the deadline itself, between pulls.
    world.model.streams = false;
    run_with_deadline(&mut world, "who supplies what?", 1_000).unwrap();
    assert_eq!(world.model.calls, 3);
    // The third step's tool call never started, nor did the summariser.
    assert_eq!(world.tools.calls.len(), 2);
    assert!(world.summariser.requests.is_empty());

    let frames = stream_frames(&world.sink.events);
    let kinds: Vec<&str> = frames.iter().map(|(k, _)| *k).collect();
    assert_eq!(kinds[kinds.len() - 3..], ["error", "completed", "done"]);
    let (_, error) = &frames[frames.len() - 3];
    assert_eq!(error["code"], "turn_deadline_exceeded");
    assert_eq!(error["status"], 504);
    assert_eq!(error["deadline_ms"], 1_000);
    assert_eq!(error["steps"], 3);
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("1 s deadline"), "{message}");
    assert!(message.contains("after 3 reasoning steps"), "{message}");
    assert_eq!(kinds.iter().filter(|k| **k == "tool_call").count(), 2);

    let conversation = world_conversation(&world);
    let turns = memory::load(&world.kv, &conversation).unwrap().turns;
    let last = turns.last().unwrap();
    assert_eq!(last.role, "assistant");
    assert_eq!(last.route.as_deref(), Some(DEADLINE_ROUTE));
    assert!(last.content.contains("deadline"), "{}", last.content);
}

#[test]
fn a_json_turn_out_of_time_is_a_504_and_no_call_starts_after_it() {
    let mut world = World::new(Intent::Query, searches(8), false);
    world.model.call_ms = 300;
    // Whole completions (a model that cannot stream), each 300 ms.
    world.model.streams = false;
    let e = run_with_deadline(&mut world, "who supplies what?", 500).unwrap_err();
    assert_eq!(e.status, 504);
    assert_eq!(e.code, "turn_deadline_exceeded");
    assert_eq!(e.detail.as_ref().unwrap()["steps"], 2);
    assert_eq!(world.model.calls, 2);
    assert_eq!(world.tools.calls.len(), 1);
    assert!(world.summariser.requests.is_empty());
    assert!(
        !world
            .sink
            .events
            .iter()
            .any(|e| matches!(e, Event::Failure { .. } | Event::Completed(_))),
        "/chat's answer is the error itself"
    );
}

#[test]
fn the_deadline_passing_during_the_answer_stops_the_summary_from_starting() {
    // One step that answers, but it ends past the deadline: the summariser is not asked.
    let mut world = World::new(Intent::Query, vec![Say::Text("draft")], true);
    world.model.call_ms = 2_000;
    run_with_deadline(&mut world, "who is ACME?", 1_000).unwrap();
    assert_eq!(world.model.calls, 1);
    assert!(world.summariser.requests.is_empty());
    let kinds: Vec<&str> = stream_frames(&world.sink.events)
        .iter()
        .map(|(k, _)| *k)
        .collect();
    assert_eq!(kinds[kinds.len() - 3..], ["error", "completed", "done"]);
}

#[test]
fn without_a_deadline_a_slow_turn_runs_to_its_answer() {
    let mut script = searches(3);
    script.push(Say::Text("ACME and BETA"));
    let mut world = World::new(Intent::Query, script, true);
    world.model.call_ms = 60_000;
    let result = run_with_deadline(&mut world, "who supplies what?", 0).unwrap();
    assert_eq!(result.steps, 4);
    assert_eq!(world.summariser.requests.len(), 1);
    assert!(
        !world
            .sink
            .events
            .iter()
            .any(|e| matches!(e, Event::Failure { .. }))
    );
}

#[test]
fn a_running_batch_is_not_cut_by_the_deadline() {
    let mut world = World::new(Intent::Action, vec![], true);
    let ids = world.tools.order_ids();
    world.model.script = payment_script(&ids).into();
    // Four 100 ms steps, then 20 orders in chunks of 5 at 300 ms each: the deadline
    // passes during the second chunk.
    world.model.call_ms = 100;
    world.executor.chunk_ms = 300;
    run_with_deadline(&mut world, "pay all ACME orders", 1_000).unwrap();
    let log = world.executor.log.borrow();
    assert!(!log.cancelled, "the turn's deadline cancelled the batch");
    assert_eq!(log.chunks_pulled, 4);
    drop(log);
    // The batch's outcome is reported, but no LLM-written report starts.
    assert!(world.summariser.requests.is_empty());
    let frames = stream_frames(&world.sink.events);
    let kinds: Vec<&str> = frames.iter().map(|(k, _)| *k).collect();
    assert_eq!(
        kinds.iter().filter(|k| **k == "action_progress").count(),
        20
    );
    assert!(kinds.contains(&"action_complete"));
    assert_eq!(kinds[kinds.len() - 3..], ["error", "completed", "done"]);
    assert_eq!(frames[frames.len() - 3].1["code"], "turn_deadline_exceeded");
    let conversation = world_conversation(&world);
    let turns = memory::load(&world.kv, &conversation).unwrap().turns;
    let report = &turns[turns.len() - 2];
    assert!(
        report.content.contains("deadline passed during the batch"),
        "{}",
        report.content
    );
    assert_eq!(turns.last().unwrap().route.as_deref(), Some(DEADLINE_ROUTE));
}

#[test]
fn a_client_that_left_is_cancelled_even_past_the_deadline() {
    let mut world = World::new(Intent::Query, searches(8), true);
    world.model.call_ms = 400;
    // The first call outlasts the deadline and the client leaves during it.
    world.model.script.push_front(Say::LeaveDuringCall);
    let e = run_with_deadline(&mut world, "who supplies what?", 300).unwrap_err();
    assert_eq!(e.code, "client_gone");
}
