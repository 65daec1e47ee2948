//! Server-Sent Events, the one encoder for the event vocabulary of DESIGN.md §3: each event
//! is `event: <type>` plus one `data:` line holding a JSON object whose `type` repeats it,
//! so clients that read only `data` still know what they got.

use serde_json::{Value, json};

pub const CONTENT_TYPE: &str = "text/event-stream";

/// One event. `data` should be a JSON object; anything else is wrapped as `{"value": …}`.
pub fn event(kind: &str, data: Value) -> Vec<u8> {
    let mut object = match data {
        Value::Object(map) => map,
        other => {
            let mut map = serde_json::Map::new();
            map.insert("value".into(), other);
            map
        }
    };
    object.insert("type".into(), json!(kind));
    // serde_json writes no raw newlines (they are escaped inside strings), so the payload
    // is always exactly one `data:` line.
    format!("event: {kind}\ndata: {}\n\n", Value::Object(object)).into_bytes()
}

/// True when an `Accept` header asks for an event stream (`text/event-stream` listed
/// without `q=0`); anything else, or no header, gets JSON.
pub fn accepts_event_stream(accept: Option<&str>) -> bool {
    accept.is_some_and(|header| {
        header.split(',').any(|item| {
            let mut parts = item.split(';');
            let media = parts.next().unwrap_or("").trim();
            media.eq_ignore_ascii_case(CONTENT_TYPE)
                && parts.all(|p| {
                    let p = p.trim();
                    let q = p.strip_prefix("q=").or_else(|| p.strip_prefix("Q="));
                    q.is_none_or(|q| q.trim().parse::<f32>().is_ok_and(|q| q > 0.0))
                })
        })
    })
}

/// A comment line: ignored by clients, keeps proxies from timing the stream out.
pub fn comment(text: &str) -> Vec<u8> {
    let single_line: String = text.chars().filter(|c| *c != '\n' && *c != '\r').collect();
    format!(": {single_line}\n\n").into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn encodes_type_and_data() {
        let e = String::from_utf8(event("action_progress", json!({"completed": 1}))).unwrap();
        assert_eq!(
            e,
            "event: action_progress\ndata: {\"completed\":1,\"type\":\"action_progress\"}\n\n"
        );
        assert_eq!(comment("heart\nbeat"), b": heartbeat\n\n");
    }

    #[test]
    fn event_stream_only_when_asked_for() {
        assert!(accepts_event_stream(Some("text/event-stream")));
        assert!(accepts_event_stream(Some(
            "text/event-stream, application/json"
        )));
        assert!(accepts_event_stream(Some(
            "application/json;q=0.5, Text/Event-Stream;q=0.9"
        )));
        assert!(!accepts_event_stream(None));
        assert!(!accepts_event_stream(Some("application/json")));
        assert!(!accepts_event_stream(Some("*/*")));
        assert!(!accepts_event_stream(Some("text/event-stream;q=0")));
    }

    proptest! {
        /// Whatever the text, an event is exactly two lines and a blank line.
        #[test]
        fn one_event_is_one_frame(text in ".*") {
            let e = String::from_utf8(event("content", json!({"content": text}))).unwrap();
            prop_assert!(e.ends_with("\n\n"));
            prop_assert_eq!(e.trim_end_matches('\n').lines().count(), 2);
            let data = e.lines().nth(1).unwrap().strip_prefix("data: ").unwrap();
            let back: Value = serde_json::from_str(data).unwrap();
            prop_assert_eq!(&back["content"], &json!(text));
        }
    }
}
