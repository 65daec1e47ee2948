//! A ReAct step streamed on `/chat/stream`: its text goes out as it arrives, in case it is
//! the answer. A step that calls no tool is the answer (no summariser, its text not sent
//! again); text that turns out to preface tool calls becomes a `thinking` event and the
//! next answer's `content_start` resets what was shown.

use super::fakes::{Say, World};
use super::run;
use crate::events::Event;
use kg_wit::kg::router::router::Intent;
use serde_json::json;

const ANSWER: &str = "ACME supplies three open orders.";

/// The text a client shows at the end: content since the last reset.
fn shown(events: &[Event]) -> String {
    let mut text = String::new();
    for e in events {
        match e {
            Event::ContentReset => text.clear(),
            Event::Content(piece) => text.push_str(piece),
            _ => {}
        }
    }
    text
}

#[test]
fn a_react_step_answering_without_tools_streams_delta_by_delta() {
    let mut world = World::new(Intent::Query, vec![Say::Text(ANSWER)], true);
    let result = run(&mut world, "who supplies ACME?", 10).unwrap();
    let contents: Vec<&str> = world
        .sink
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Content(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        contents,
        ["ACME ", "supplies ", "three ", "open ", "orders."]
    );
    let kinds = world.sink.kinds();
    assert_eq!(kinds.iter().filter(|k| **k == "content_start").count(), 1);
    assert!(
        !world
            .sink
            .events
            .iter()
            .any(|e| matches!(e, Event::ContentReset))
    );
    // The content came while the step's call was out, before its trace.
    let first_content = kinds.iter().position(|k| *k == "content").unwrap();
    let step_trace = world
        .sink
        .events
        .iter()
        .position(|e| matches!(e, Event::Trace(t) if t["kind"] == "step"))
        .unwrap();
    assert!(first_content < step_trace, "{kinds:?}");
    assert_eq!(result.answer, ANSWER);
    assert_eq!(world.model.calls, 1);
    assert!(world.summariser.requests.is_empty());
    assert_eq!(result.model_used.as_deref(), Some("fake-model-streamed"));
    assert_eq!((result.prompt_tokens, result.completion_tokens), (10, 2));
    let Some(Event::Completed(completed)) = world.sink.events.last() else {
        panic!("{kinds:?}");
    };
    assert_eq!(completed.answer, ANSWER);
}

#[test]
fn a_preface_to_tool_calls_becomes_thinking_and_the_answer_resets_it() {
    let preface = "Let me look that up. ";
    let script = vec![
        Say::Preface(
            preface,
            vec![("search_instances", json!({"label": "Supplier"}))],
        ),
        Say::Text("ACME, from the search."),
    ];
    let mut world = World::new(Intent::Query, script, true);
    let result = run(&mut world, "who supplies ACME?", 10).unwrap();
    let events = &world.sink.events;
    let kinds = world.sink.kinds();
    // The preface was shown as it came, then named reasoning before the tool ran.
    let first_content = kinds.iter().position(|k| *k == "content").unwrap();
    let preface_thinking = events
        .iter()
        .position(|e| matches!(e, Event::Thinking { details, .. } if details == preface))
        .unwrap_or_else(|| panic!("{kinds:?}"));
    let tool_call = kinds.iter().position(|k| *k == "tool_call").unwrap();
    assert!(first_content < preface_thinking && preface_thinking < tool_call);
    // Every later content_start resets; the client ends up showing the summariser's answer.
    let resets = events
        .iter()
        .filter(|e| matches!(e, Event::ContentReset))
        .count();
    assert!(resets >= 1, "{kinds:?}");
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, Event::ContentStart))
            .count(),
        1,
        "only the preface's content_start does not reset: {kinds:?}"
    );
    assert_eq!(world.summariser.requests.len(), 1);
    assert!(!result.answer.contains(preface));
    // The (fake) summariser's streamed pieces, and nothing shown before them.
    let streamed: String = world
        .summariser
        .pieces
        .iter()
        .map(|p| p.to_string())
        .collect();
    assert_eq!(shown(events), streamed);
    let Some(Event::Completed(completed)) = events.last() else {
        panic!("{kinds:?}");
    };
    assert_eq!(completed.answer, result.answer);
}

#[test]
fn chat_json_gets_a_react_step_whole_and_no_reset() {
    let script = vec![
        Say::Preface("Let me look. ", vec![("search_instances", json!({}))]),
        Say::Text("done"),
    ];
    let mut world = World::new(Intent::Query, script, false);
    let result = run(&mut world, "who supplies ACME?", 10).unwrap();
    // Still streamed from the LLM (so a dropped call stops on the server too), but no
    // step's text is shown before the answer, and nothing is reset.
    assert!(world.model.pulls.get() > 0);
    assert!(
        !world
            .sink
            .events
            .iter()
            .any(|e| matches!(e, Event::ContentReset))
    );
    assert_eq!(shown(&world.sink.events), result.answer);
}

#[test]
fn a_client_leaving_mid_step_stops_the_stream_and_nothing_more_is_called() {
    let script = vec![
        Say::Preface(
            "one two three four five six ",
            vec![("search_instances", json!({}))],
        ),
        Say::Text("never asked"),
    ];
    let mut world = World::new(Intent::Query, script, true);
    // Leaves on the second content event (the fakes panic on any pull or call after).
    let before = {
        let mut probe = World::new(Intent::Query, vec![Say::Text(ANSWER)], true);
        run(&mut probe, "who supplies ACME?", 10).unwrap();
        probe
            .sink
            .kinds()
            .iter()
            .position(|k| *k == "content")
            .unwrap()
    };
    world.sink.leave_after = Some(before + 2);
    let outcome = run(&mut world, "who supplies ACME?", 10);
    if let Err(e) = &outcome {
        assert_eq!(e.code, "client_gone");
    }
    assert_eq!(world.model.calls, 1);
    assert!(world.tools.calls.is_empty());
    assert!(world.summariser.requests.is_empty());
    let contents = world
        .sink
        .events
        .iter()
        .filter(|e| matches!(e, Event::Content(_)))
        .count();
    assert_eq!(contents, 2);
}

/// Qwen2.5-Coder-0.5B's first step as llama-server streamed it (tests/golden in
/// llm-client): the call as bare JSON in `content`, `tool_calls` empty. It runs as a call,
/// nothing of it reaches the client, and the summariser writes the answer.
#[test]
fn a_call_written_as_text_runs_and_is_never_shown() {
    let script = vec![
        Say::Text(r#"{"name": "search_instances", "arguments": {"search_term": "ACME"}}"#),
        Say::Text("done"),
    ];
    for streaming in [true, false] {
        let mut world = World::new(Intent::Query, script.clone(), streaming);
        let result = run(&mut world, "who is ACME?", 10).unwrap();
        assert_eq!(world.tools.calls.len(), 1, "streaming {streaming}");
        assert_eq!(world.tools.calls[0], "search_instances");
        let events = &world.sink.events;
        assert!(events.iter().any(|e| matches!(e,
            Event::ToolCall { name, arguments, .. }
                if name == "search_instances" && *arguments == json!({"search_term": "ACME"}))));
        assert!(!result.answer.contains("arguments"), "{}", result.answer);
        assert!(
            !shown(events).contains("search_term"),
            "streaming {streaming}: {}",
            shown(events)
        );
        assert_eq!(world.summariser.requests.len(), 1, "the summariser answers");
    }
}
