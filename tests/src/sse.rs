//! Reading the agent's Server-Sent Events as a client does: whole frames only (a stream
//! cut mid-frame leaves a tail that is not an event), each with its SSE `id:` when it has
//! one and its JSON `data:`.

use serde_json::Value;
use std::time::{Duration, Instant};

/// One event: its SSE id (`<turn>:<seq>`, `None` on an unrecorded stream) and its data.
pub type Frame = (Option<String>, Value);

/// The whole frames of an SSE body (comments and a cut-off tail are left out). Panics on a
/// `data:` line that is not JSON: the agent never sends one.
pub fn frames(body: &str) -> Vec<Frame> {
    let whole = body.rfind("\n\n").map_or("", |end| &body[..end]);
    whole
        .split("\n\n")
        .filter_map(|frame| {
            let data = frame.lines().find_map(|l| l.strip_prefix("data: "))?;
            let id = frame
                .lines()
                .find_map(|l| l.strip_prefix("id: "))
                .map(str::to_string);
            let data = serde_json::from_str(data)
                .unwrap_or_else(|e| panic!("an event's data is not JSON ({e}): {data}"));
            Some((id, data))
        })
        .collect()
}

/// The events (data only) of an SSE body.
pub fn events(body: &str) -> Vec<Value> {
    frames(body).into_iter().map(|(_, data)| data).collect()
}

/// The conversation a stream's `conversation_id` event names.
pub fn conversation_of(events: &[Value]) -> String {
    events
        .iter()
        .find(|e| e["type"] == "conversation_id")
        .and_then(|e| e["id"].as_str().map(str::to_string))
        .unwrap_or_else(|| panic!("no conversation_id event: {events:?}"))
}

/// The seq of an SSE id `<turn>:<seq>`.
pub fn seq_of(id: &str) -> u64 {
    id.rsplit_once(':')
        .and_then(|(_, seq)| seq.parse().ok())
        .unwrap_or_else(|| panic!("not an event id `<turn>:<seq>`: {id}"))
}

/// Reads a streamed response until `ready(what was read so far)` holds, within 20 s;
/// returns what was read. Panics when the stream ends or fails first.
pub async fn read_until(
    response: &mut reqwest::Response,
    mut ready: impl FnMut(&str) -> bool,
) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut seen = String::new();
    while !ready(&seen) {
        assert!(Instant::now() < deadline, "never ready; read: {seen}");
        match tokio::time::timeout(Duration::from_millis(20), response.chunk()).await {
            Ok(Ok(Some(bytes))) => seen.push_str(&String::from_utf8_lossy(&bytes)),
            Ok(Ok(None)) => panic!("the stream ended early: {seen}"),
            Ok(Err(e)) => panic!("the stream failed: {e}; read: {seen}"),
            Err(_) => {}
        }
    }
    seen
}

/// Reads a streamed response to its end, or until the connection fails (a cut): what
/// arrived, and whether it ended cleanly.
pub async fn read_to_end(response: &mut reqwest::Response) -> (String, bool) {
    let mut seen = String::new();
    loop {
        match response.chunk().await {
            Ok(Some(bytes)) => seen.push_str(&String::from_utf8_lossy(&bytes)),
            Ok(None) => return (seen, true),
            Err(_) => return (seen, false),
        }
    }
}
