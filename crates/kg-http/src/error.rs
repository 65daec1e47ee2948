use kg_wit::types;
use serde_json::{Value, json};

/// An error as the HTTP API returns it: a stable `code`, a human `message`, the status.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    pub status: u16,
    pub code: String,
    pub message: String,
    pub detail: Option<Value>,
}

impl ApiError {
    pub fn new(status: u16, code: &str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code: code.to_string(),
            message: message.into(),
            detail: None,
        }
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "bad_request", message)
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(404, "not_found", message)
    }

    pub fn with_detail(mut self, detail: Value) -> Self {
        self.detail = Some(detail);
        self
    }

    /// `{"error": {"code", "message", "detail"?}}`
    pub fn to_json(&self) -> Value {
        let mut error = json!({ "code": self.code, "message": self.message });
        if let Some(detail) = &self.detail {
            error["detail"] = detail.clone();
        }
        json!({ "error": error })
    }

    pub fn body(&self) -> Vec<u8> {
        self.to_json().to_string().into_bytes()
    }
}

/// The `Retry-After` (seconds) of a 503 that names no wait of its own: a dependency (the
/// graph, the LLM, the key-value store, an identity provider) did not answer. A client
/// told when to come back backs off instead of retrying at once, and a load test can tell
/// the app's deliberate refusal from a failure (issue #49: every 503 carries one, the load
/// balancer's own included). Five seconds: longer than a graph pause or an instance restart
/// usually lasts here, short enough not to keep a user waiting on a dependency that is back.
pub const UNAVAILABLE_RETRY_AFTER_S: u64 = 5;

/// The `Retry-After` of an answer with `status` and JSON `body`: the error's own
/// `detail.retry_after_s` (a rate limit's window), else [`UNAVAILABLE_RETRY_AFTER_S`] for
/// any 503, else none.
pub fn retry_after(status: u16, body: &Value) -> Option<u64> {
    body["error"]["detail"]["retry_after_s"]
        .as_u64()
        .or((status == 503).then_some(UNAVAILABLE_RETRY_AFTER_S))
}

/// A component's typed error becomes an HTTP error with the status its class fits. A
/// JSON-object detail may carry a finer stable `code` (e.g. `approval_used` for a
/// conflict, `batch_limit` for a denial), which replaces the class name; the rest of the
/// object stays the detail.
impl From<types::Error> for ApiError {
    fn from(e: types::Error) -> Self {
        let mut detail = e
            .detail
            .as_deref()
            .map(|d| serde_json::from_str(d).unwrap_or_else(|_| Value::String(d.to_string())));
        let mut code = e.code.as_str().to_string();
        if let Some(Value::Object(map)) = &mut detail
            && let Some(Value::String(finer)) = map.remove("code")
        {
            code = finer;
            if map.is_empty() {
                detail = None;
            }
        }
        ApiError {
            status: e.code.http_status(),
            code,
            message: e.message,
            detail,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn component_errors_keep_code_message_and_json_detail() {
        let mut e = types::Error::new(types::ErrorCode::NotFound, "no tool `x`");
        e.detail = Some(r#"{"did_you_mean":["y"]}"#.into());
        let api = ApiError::from(e);
        assert_eq!(api.status, 404);
        assert_eq!(
            api.to_json(),
            json!({"error": {"code": "not_found", "message": "no tool `x`", "detail": {"did_you_mean": ["y"]}}})
        );
    }

    #[test]
    fn a_detail_code_refines_the_class() {
        let mut e = types::Error::new(types::ErrorCode::Conflict, "used");
        e.detail = Some(r#"{"code":"approval_used","first":{"redeemed_by":"ann"}}"#.into());
        let api = ApiError::from(e);
        assert_eq!((api.status, api.code.as_str()), (409, "approval_used"));
        assert_eq!(api.detail, Some(json!({"first": {"redeemed_by": "ann"}})));
        let mut bare = types::Error::new(types::ErrorCode::Denied, "no");
        bare.detail = Some(r#"{"code":"four_eyes"}"#.into());
        assert_eq!(ApiError::from(bare).detail, None);
    }

    #[test]
    fn every_503_says_when_to_retry_and_a_limit_keeps_its_own_wait() {
        let down = ApiError::new(503, "unavailable", "graph").to_json();
        assert_eq!(retry_after(503, &down), Some(UNAVAILABLE_RETRY_AFTER_S));
        assert_eq!(retry_after(503, &json!({"status": "not_ready"})), Some(5));
        let limited = ApiError::new(429, "rate_limited", "slow down")
            .with_detail(json!({"retry_after_s": 17}))
            .to_json();
        assert_eq!(retry_after(429, &limited), Some(17));
        for status in [200, 400, 404, 500, 502, 504] {
            assert_eq!(retry_after(status, &down), None, "{status}");
        }
    }

    #[test]
    fn non_json_detail_is_kept_as_a_string() {
        let mut e = types::Error::new(types::ErrorCode::Upstream, "boom");
        e.detail = Some("plain text".into());
        assert_eq!(ApiError::from(e).detail, Some(json!("plain text")));
    }
}
