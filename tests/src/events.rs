//! The event contract: every event an end-to-end test reads from `/chat/stream` (or a
//! streamed approval) is checked against `docs/events.schema.json`, and the stream's
//! order against the rules the schema cannot state: `done` last, `completed` just before
//! it (once), an `error` only before them.

use serde_json::Value;
use std::sync::OnceLock;

const SCHEMA: &str = include_str!("../../docs/events.schema.json");

fn validator() -> &'static jsonschema::Validator {
    static VALIDATOR: OnceLock<jsonschema::Validator> = OnceLock::new();
    VALIDATOR.get_or_init(|| {
        let schema: Value = serde_json::from_str(SCHEMA).expect("docs/events.schema.json is JSON");
        jsonschema::options()
            .should_validate_formats(true)
            .build(&schema)
            .expect("docs/events.schema.json is a valid JSON Schema")
    })
}

/// The schema's complaints about one event (empty when it conforms).
pub fn violations(event: &Value) -> Vec<String> {
    validator()
        .iter_errors(event)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

/// Panics, naming the event and the rule, unless every event conforms to the schema and
/// the stream ends `completed`, `done` (with any `error` before them).
pub fn check_stream(events: &[Value]) {
    for (i, event) in events.iter().enumerate() {
        let problems = violations(event);
        assert!(
            problems.is_empty(),
            "event {i} breaks docs/events.schema.json: {problems:?}\nevent: {event}"
        );
    }
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["type"].as_str().unwrap_or_default())
        .collect();
    assert!(
        kinds.ends_with(&["completed", "done"]),
        "a stream ends with completed then done: {kinds:?}"
    );
    assert_eq!(
        kinds.iter().filter(|k| **k == "completed").count(),
        1,
        "one completed per stream: {kinds:?}"
    );
    assert_eq!(
        kinds.iter().filter(|k| **k == "done").count(),
        1,
        "one done per stream: {kinds:?}"
    );
}
