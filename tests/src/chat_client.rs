//! The requests the chat tests make over and over: a streamed turn, a resume of one, a
//! streamed approval, a conversation's last recorded turn and its questions. `base` is the
//! application's URL, or a proxy's in front of it.

use crate::AppHost;
use serde_json::{Value, json};

/// `POST /chat/stream` with `body`, as `key`.
pub fn stream(base: &str, key: &str, body: &Value) -> reqwest::RequestBuilder {
    reqwest::Client::new()
        .post(format!("{base}/chat/stream"))
        .bearer_auth(key)
        .body(body.to_string())
}

/// `GET /chat/stream/{turn}` as `key`, after the event `last` (`Last-Event-ID`) if given.
pub fn resume(base: &str, key: &str, turn: &str, last: Option<&str>) -> reqwest::RequestBuilder {
    let request = reqwest::Client::new()
        .get(format!("{base}/chat/stream/{turn}"))
        .bearer_auth(key);
    match last {
        Some(id) => request.header("last-event-id", id),
        None => request,
    }
}

/// `POST /chat/approve` approving `token`, as `key`, asking for the batch as a stream.
pub fn approve_streamed(base: &str, key: &str, token: &str) -> reqwest::RequestBuilder {
    reqwest::Client::new()
        .post(format!("{base}/chat/approve"))
        .bearer_auth(key)
        .header("accept", "text/event-stream")
        .header("content-type", "application/json")
        .body(json!({"approval_token": token, "approve": true}).to_string())
}

/// The turn id a streamed response names in `x-turn-id`.
pub fn turn_id(response: &reqwest::Response) -> String {
    response.headers()["x-turn-id"]
        .to_str()
        .expect("x-turn-id is text")
        .to_string()
}

/// The last turn `conversation` recorded (`null` when it has none), read as the host's
/// key (an admin's unless the test changed it).
pub async fn last_turn(host: &AppHost, conversation: &str) -> Value {
    let (status, c) = host
        .get(&format!("/conversations/{conversation}"))
        .await
        .expect("GET /conversations/{id}");
    assert_eq!(status, 200, "{c}");
    c["turns"]
        .as_array()
        .and_then(|t| t.last())
        .cloned()
        .unwrap_or(Value::Null)
}

/// The questions (`user` turns' content) of a `GET /conversations/{id}` answer, in order.
pub fn user_turns(conversation: &Value) -> Vec<&str> {
    conversation["turns"]
        .as_array()
        .expect("turns")
        .iter()
        .filter(|t| t["role"] == "user")
        .map(|t| t["content"].as_str().expect("a turn's content is text"))
        .collect()
}
