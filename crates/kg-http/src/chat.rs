//! The chat endpoints' request bodies (seed 000 §6, seed 001 fields).

use crate::ApiError;
use serde_json::{Map, Value};

/// Longest message accepted.
pub const MAX_MESSAGE_CHARS: usize = 20_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoutingMode {
    Rule,
    Llm,
    Hybrid,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ChatBody {
    pub message: String,
    pub conversation_id: Option<String>,
    pub routing_mode: RoutingMode,
    pub trace: bool,
}

/// `{message | query, conversation_id?, thread_id?, routing_mode?, trace?}`.
pub fn chat_body(body: &Map<String, Value>) -> Result<ChatBody, ApiError> {
    const FIELDS: &[&str] = &[
        "message",
        "query",
        "question",
        "conversation_id",
        "thread_id",
        "routing_mode",
        "trace",
        "stream",
    ];
    crate::body::only_fields(body, FIELDS)?;
    let message = ["message", "query", "question"]
        .iter()
        .find_map(|f| body.get(*f).map(|v| (*f, v)));
    let message = match message {
        Some((_, Value::String(s))) if !s.trim().is_empty() => s.trim().to_string(),
        Some((f, Value::String(_))) => {
            return Err(ApiError::bad_request(format!("`{f}` must not be empty")));
        }
        Some((f, _)) => return Err(ApiError::bad_request(format!("`{f}` must be a string"))),
        None => return Err(ApiError::bad_request("`message` is required")),
    };
    if message.chars().count() > MAX_MESSAGE_CHARS {
        return Err(ApiError::bad_request(format!(
            "`message` is longer than {MAX_MESSAGE_CHARS} characters"
        )));
    }
    let conversation_id = match body
        .get("conversation_id")
        .or_else(|| body.get("thread_id"))
    {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        // `7.0` is the integer 7 to JSON Schema: its digits, as for `7`.
        Some(v @ Value::Number(n)) => {
            Some(crate::body::whole_number(v).map_or_else(|| n.to_string(), |n| n.to_string()))
        }
        Some(_) => return Err(ApiError::bad_request("`conversation_id` must be a string")),
    };
    let routing_mode = match body.get("routing_mode").and_then(Value::as_str) {
        None => RoutingMode::Hybrid,
        Some("rule") => RoutingMode::Rule,
        Some("llm") => RoutingMode::Llm,
        Some("hybrid") => RoutingMode::Hybrid,
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "`routing_mode` must be rule, llm or hybrid, not `{other}`"
            )));
        }
    };
    if body
        .get("routing_mode")
        .is_some_and(|v| !v.is_string() && !v.is_null())
    {
        return Err(ApiError::bad_request("`routing_mode` must be a string"));
    }
    let trace = match body.get("trace") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(ApiError::bad_request("`trace` must be a boolean")),
    };
    Ok(ChatBody {
        message,
        conversation_id,
        routing_mode,
        trace,
    })
}

/// `{approval_token, approve?}` of `POST /chat/approve`.
pub fn approve_body(body: &Map<String, Value>) -> Result<(String, bool), ApiError> {
    crate::body::only_fields(body, &["approval_token", "approve"])?;
    let token = match body.get("approval_token") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        _ => {
            return Err(ApiError::bad_request(
                "`approval_token` is required (a string)",
            ));
        }
    };
    let approve = match body.get("approve") {
        None | Some(Value::Null) => true,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(ApiError::bad_request("`approve` must be a boolean")),
    };
    Ok((token, approve))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn body(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn chat_bodies() {
        let b = chat_body(&body(
            json!({"query": " hi ", "thread_id": 7, "routing_mode": "rule"}),
        ))
        .unwrap();
        assert_eq!(
            (
                b.message.as_str(),
                b.conversation_id.as_deref(),
                b.routing_mode
            ),
            ("hi", Some("7"), RoutingMode::Rule)
        );
        for (bad, needle) in [
            (json!({}), "`message` is required"),
            (json!({"message": ""}), "must not be empty"),
            (json!({"message": 1}), "must be a string"),
            (
                json!({"message": "x", "routing_mode": "magic"}),
                "rule, llm or hybrid",
            ),
            (
                json!({"message": "x", "trace": "yes"}),
                "`trace` must be a boolean",
            ),
            (json!({"message": "x", "speed": 1}), "unknown field `speed`"),
            (
                json!({"message": "x".repeat(MAX_MESSAGE_CHARS + 1)}),
                "longer than",
            ),
        ] {
            let e = chat_body(&body(bad)).unwrap_err();
            assert!(e.message.contains(needle), "{} vs {needle}", e.message);
        }
        assert_eq!(
            approve_body(&body(json!({"approval_token": "t"}))).unwrap(),
            ("t".into(), true)
        );
        assert!(approve_body(&body(json!({}))).is_err());
        let e = approve_body(&body(json!({"approval_token": "t", "approved": false}))).unwrap_err();
        assert_eq!(
            e.message,
            "unknown field `approved` (allowed: approval_token, approve)"
        );
    }
}
