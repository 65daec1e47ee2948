//! JSON-RPC 2.0 messages as MCP uses them: one message per POST (MCP removed batches in
//! 2025-06-18), ids that are strings or integers, params that are objects.

use serde_json::{Map, Value, json};

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;

/// A message a client posted.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// Expects a response with the same id.
    Request {
        id: Value,
        method: String,
        params: Map<String, Value>,
    },
    /// Expects nothing (`notifications/initialized`, `notifications/cancelled`, …).
    Notification { method: String },
    /// A client's answer to a server request. This server sends none, so it only
    /// acknowledges it.
    Response,
}

/// Why a body is not a message this server can answer; `id` when the body had a usable one.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejection {
    pub id: Value,
    pub code: i64,
    pub message: String,
}

impl Rejection {
    fn new(id: Value, code: i64, message: impl Into<String>) -> Rejection {
        Rejection {
            id,
            code,
            message: message.into(),
        }
    }

    pub fn to_json(&self) -> Value {
        error(&self.id, self.code, &self.message, None)
    }
}

/// Parses one posted body.
pub fn parse(body: &[u8]) -> Result<Incoming, Rejection> {
    let value: Value = serde_json::from_slice(body).map_err(|e| {
        Rejection::new(
            Value::Null,
            PARSE_ERROR,
            format!("the body is not JSON: {e}"),
        )
    })?;
    let object = match value {
        Value::Object(object) => object,
        Value::Array(_) => {
            return Err(Rejection::new(
                Value::Null,
                INVALID_REQUEST,
                "JSON-RPC batches are not part of MCP (removed in 2025-06-18): send one message per request",
            ));
        }
        other => {
            return Err(Rejection::new(
                Value::Null,
                INVALID_REQUEST,
                format!("a JSON-RPC message is an object, got {}", kind(&other)),
            ));
        }
    };
    let id = match object.get("id") {
        None => None,
        Some(id @ Value::String(_)) => Some(id.clone()),
        Some(id @ Value::Number(n)) if n.is_i64() || n.is_u64() => Some(id.clone()),
        Some(other) => {
            return Err(Rejection::new(
                Value::Null,
                INVALID_REQUEST,
                format!("`id` must be a string or an integer, got {}", kind(other)),
            ));
        }
    };
    let reply_id = id.clone().unwrap_or(Value::Null);
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(Rejection::new(
            reply_id,
            INVALID_REQUEST,
            "`jsonrpc` must be \"2.0\"",
        ));
    }
    let method = match object.get("method") {
        Some(Value::String(method)) => method.clone(),
        Some(other) => {
            return Err(Rejection::new(
                reply_id,
                INVALID_REQUEST,
                format!("`method` must be a string, got {}", kind(other)),
            ));
        }
        None if id.is_some() && (object.contains_key("result") || object.contains_key("error")) => {
            return Ok(Incoming::Response);
        }
        None => {
            return Err(Rejection::new(
                reply_id,
                INVALID_REQUEST,
                "a request needs a `method`",
            ));
        }
    };
    let Some(id) = id else {
        return Ok(Incoming::Notification { method });
    };
    let params = match object.get("params") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(params)) => params.clone(),
        Some(other) => {
            return Err(Rejection::new(
                id,
                INVALID_PARAMS,
                format!("`params` must be an object, got {}", kind(other)),
            ));
        }
    };
    Ok(Incoming::Request { id, method, params })
}

/// A success response.
pub fn result(id: &Value, result: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

/// An error response.
pub fn error(id: &Value, code: i64, message: &str, data: Option<Value>) -> Value {
    let mut error = json!({ "code": code, "message": message });
    if let Some(data) = data {
        error["data"] = data;
    }
    json!({ "jsonrpc": "2.0", "id": id, "error": error })
}

/// A value's JSON kind, for error messages (never the value: it may be large or secret).
pub fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn requests_notifications_and_responses_are_told_apart() {
        assert_eq!(
            parse(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            Ok(Incoming::Request {
                id: json!(1),
                method: "ping".into(),
                params: Map::new()
            })
        );
        assert_eq!(
            parse(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Ok(Incoming::Notification {
                method: "notifications/initialized".into()
            })
        );
        assert_eq!(
            parse(br#"{"jsonrpc":"2.0","id":"a","result":{}}"#),
            Ok(Incoming::Response)
        );
    }

    #[test]
    fn malformed_messages_get_the_json_rpc_code_that_names_their_fault() {
        let code = |body: &[u8]| parse(body).unwrap_err().code;
        assert_eq!(code(b"{"), PARSE_ERROR);
        assert_eq!(code(b""), PARSE_ERROR);
        assert_eq!(
            code(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#),
            INVALID_REQUEST
        );
        assert_eq!(code(b"42"), INVALID_REQUEST);
        assert_eq!(code(br#"{"id":1,"method":"ping"}"#), INVALID_REQUEST);
        assert_eq!(
            code(br#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#),
            INVALID_REQUEST
        );
        assert_eq!(
            code(br#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#),
            INVALID_REQUEST
        );
        assert_eq!(
            code(br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#),
            INVALID_REQUEST
        );
        assert_eq!(
            code(br#"{"jsonrpc":"2.0","id":1,"method":7}"#),
            INVALID_REQUEST
        );
        assert_eq!(code(br#"{"jsonrpc":"2.0","id":1}"#), INVALID_REQUEST);
        assert_eq!(
            code(br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}"#),
            INVALID_PARAMS
        );
    }

    #[test]
    fn a_rejection_keeps_the_id_it_could_read() {
        let r = parse(br#"{"jsonrpc":"2.0","id":"x","method":"m","params":3}"#).unwrap_err();
        assert_eq!(r.to_json()["id"], json!("x"));
        let r = parse(b"nope").unwrap_err();
        assert_eq!(r.to_json()["id"], Value::Null);
        assert_eq!(r.to_json()["error"]["code"], json!(PARSE_ERROR));
    }

    proptest! {
        #[test]
        fn any_bytes_parse_or_are_rejected_without_panicking(body in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = parse(&body);
        }
    }
}
