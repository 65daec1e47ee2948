use crate::ApiError;
use serde_json::{Map, Value};

/// Largest request body the API accepts (documents for ingest are the largest legitimate ones).
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// Parses a request body that must be a JSON object. An empty body is an empty object.
pub fn json_object(body: &[u8]) -> Result<Map<String, Value>, ApiError> {
    if body.len() > MAX_BODY_BYTES {
        return Err(ApiError::new(
            413,
            "payload_too_large",
            format!(
                "request body is {} bytes; the limit is {MAX_BODY_BYTES}",
                body.len()
            ),
        ));
    }
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(ApiError::bad_request(format!(
            "request body must be a JSON object, got {}",
            kind(&other)
        ))),
        Err(e) => Err(ApiError::bad_request(format!(
            "request body is not valid JSON: {e}"
        ))),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
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
    fn accepts_objects_and_empty_bodies() {
        assert_eq!(json_object(b"").unwrap().len(), 0);
        assert_eq!(json_object(b" \n").unwrap().len(), 0);
        assert_eq!(json_object(br#"{"a":1}"#).unwrap()["a"], 1);
    }

    #[test]
    fn rejects_non_objects_and_garbage_with_400() {
        for body in [&b"[1]"[..], b"42", b"{\"a\":", b"\xff\xfe"] {
            let e = json_object(body).unwrap_err();
            assert_eq!(e.status, 400, "{body:?}");
        }
    }

    #[test]
    fn rejects_oversized_bodies_with_413() {
        let big = vec![b' '; MAX_BODY_BYTES + 1];
        assert_eq!(json_object(&big).unwrap_err().status, 413);
    }

    proptest! {
        #[test]
        fn never_panics_on_arbitrary_bytes(body in proptest::collection::vec(any::<u8>(), 0..256)) {
            let _ = json_object(&body);
        }
    }
}
