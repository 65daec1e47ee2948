//! Request bodies: how much the API reads, how a body that cannot be read is answered, and
//! the one parser every JSON route uses (size, nesting depth, then JSON object).

use crate::ApiError;
use serde_json::{Map, Value};

/// Largest request body the API accepts (documents for ingest are the largest legitimate ones).
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// Deepest nesting of arrays and objects a JSON body may have (the body's own object is
/// level 1). Nothing the API takes nests deeper than a few levels; a deeper body is
/// refused here rather than handed to a component or the graph.
pub const MAX_JSON_DEPTH: usize = 32;

/// 413 for a body over [`MAX_BODY_BYTES`] (`size` is what was declared or read so far).
pub fn too_large(size: usize) -> ApiError {
    ApiError::new(
        413,
        "payload_too_large",
        format!("request body is {size} bytes or more; the limit is {MAX_BODY_BYTES}"),
    )
}

/// 400 for a body the host could not hand over whole: malformed chunked encoding, or a
/// connection that ended before `Content-Length` bytes arrived. The host's own error text
/// is logged, never answered (it names internal types).
pub fn malformed_body() -> ApiError {
    ApiError::new(
        400,
        "malformed_body",
        "the request body could not be read: malformed chunked encoding, or fewer bytes than its Content-Length",
    )
}

/// 400 naming the first field of `body` that `fields` does not list: a misspelt field
/// (`top-k`, `approved`) is an error the caller sees, not a default it never asked for.
pub fn only_fields(body: &Map<String, Value>, fields: &[&str]) -> Result<(), ApiError> {
    match body.keys().find(|k| !fields.contains(&k.as_str())) {
        Some(unknown) => Err(ApiError::bad_request(format!(
            "unknown field `{unknown}` (allowed: {})",
            fields.join(", ")
        ))),
        None => Ok(()),
    }
}

/// A body read chunk by chunk, refused as soon as it exceeds [`MAX_BODY_BYTES`].
#[derive(Debug, Default)]
pub struct BodyReader {
    bytes: Vec<u8>,
}

impl BodyReader {
    /// Starts a read, refusing at once a declared `Content-Length` over the limit (an
    /// unparsable one is left to the host, which frames the body).
    pub fn new(content_length: Option<&str>) -> Result<BodyReader, ApiError> {
        let digits = content_length
            .map(str::trim)
            .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()));
        // All digits but no u64: larger than any limit.
        match digits.map(|v| v.parse::<u64>().unwrap_or(u64::MAX)) {
            Some(declared) if declared > MAX_BODY_BYTES as u64 => {
                Err(too_large(usize::try_from(declared).unwrap_or(usize::MAX)))
            }
            _ => Ok(BodyReader::default()),
        }
    }

    pub fn push(&mut self, chunk: &[u8]) -> Result<(), ApiError> {
        let size = self.bytes.len().saturating_add(chunk.len());
        if size > MAX_BODY_BYTES {
            return Err(too_large(size));
        }
        self.bytes.extend_from_slice(chunk);
        Ok(())
    }

    pub fn finish(self) -> Vec<u8> {
        self.bytes
    }
}

/// Parses a request body that must be a JSON object. An empty body is an empty object.
/// Too large is 413; nested deeper than [`MAX_JSON_DEPTH`] is 400 `invalid_parameters`;
/// not JSON (invalid UTF-8 included) or not an object is 400 `bad_request`.
pub fn json_object(body: &[u8]) -> Result<Map<String, Value>, ApiError> {
    if body.len() > MAX_BODY_BYTES {
        return Err(too_large(body.len()));
    }
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    let depth = nesting_depth(body);
    if depth > MAX_JSON_DEPTH {
        return Err(ApiError::new(
            400,
            "invalid_parameters",
            format!("request body nests arrays and objects more than {MAX_JSON_DEPTH} levels deep"),
        )
        .with_detail(serde_json::json!({"max_depth": MAX_JSON_DEPTH})));
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

/// The deepest nesting of `[`/`{` in `body`, brackets inside strings ignored; a scan of
/// the bytes, so it costs no recursion whatever the input. On text that is not JSON the
/// count is still bounded by the input and only decides which 400 is answered.
pub fn nesting_depth(body: &[u8]) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for &b in body {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
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

/// A JSON integer, also written as a float with no fraction (`41.0`: JSON Schema's
/// `integer` admits it, and some clients' numbers are all floats).
pub fn whole_number(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f <= u32::MAX as f64)
            .map(|f| f as u64)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `{"a": [[…[0]…]]}` with `levels` levels in all (the object is the first).
    fn nested(levels: usize) -> String {
        let inner = levels - 1;
        format!("{{\"a\": {}0{}}}", "[".repeat(inner), "]".repeat(inner))
    }

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
    fn invalid_utf8_inside_a_string_is_400_bad_request() {
        let e = json_object(b"{\"query\": \"\xff\xfe\"}").unwrap_err();
        assert_eq!((e.status, e.code.as_str()), (400, "bad_request"));
    }

    #[test]
    fn rejects_oversized_bodies_with_413() {
        let big = vec![b' '; MAX_BODY_BYTES + 1];
        assert_eq!(json_object(&big).unwrap_err().status, 413);
    }

    #[test]
    fn nesting_up_to_the_limit_is_accepted_and_one_more_is_invalid_parameters() {
        let at_limit = nested(MAX_JSON_DEPTH);
        assert_eq!(nesting_depth(at_limit.as_bytes()), MAX_JSON_DEPTH);
        assert!(json_object(at_limit.as_bytes()).is_ok());
        for levels in [MAX_JSON_DEPTH + 1, 64, 200, 10_000] {
            let e = json_object(nested(levels).as_bytes()).unwrap_err();
            assert_eq!(
                (e.status, e.code.as_str()),
                (400, "invalid_parameters"),
                "{levels}"
            );
            assert_eq!(e.detail.unwrap()["max_depth"], MAX_JSON_DEPTH);
        }
    }

    #[test]
    fn brackets_inside_strings_do_not_count() {
        let body = format!(r#"{{"q": "{}", "e": "\"[{{"}}"#, "[".repeat(100));
        assert_eq!(nesting_depth(body.as_bytes()), 1);
        assert!(json_object(body.as_bytes()).is_ok());
    }

    #[test]
    fn a_declared_length_over_the_limit_is_refused_before_reading() {
        assert!(BodyReader::new(None).is_ok());
        assert!(BodyReader::new(Some("12")).is_ok());
        assert!(BodyReader::new(Some("not a number")).is_ok());
        let e = BodyReader::new(Some(&(MAX_BODY_BYTES + 1).to_string())).unwrap_err();
        assert_eq!((e.status, e.code.as_str()), (413, "payload_too_large"));
        let e = BodyReader::new(Some("99999999999999999999999")).unwrap_err();
        assert_eq!(e.status, 413);
    }

    #[test]
    fn a_read_stops_at_the_limit() {
        let mut reader = BodyReader::new(None).unwrap();
        let chunk = vec![b'x'; 64 * 1024];
        for _ in 0..MAX_BODY_BYTES / chunk.len() {
            reader.push(&chunk).unwrap();
        }
        assert_eq!(reader.push(b"x").unwrap_err().status, 413);
        assert_eq!(reader.finish().len(), MAX_BODY_BYTES);
    }

    #[test]
    fn malformed_body_names_no_internal_type() {
        let e = malformed_body();
        assert_eq!((e.status, e.code.as_str()), (400, "malformed_body"));
        assert!(!e.message.contains("::"));
    }

    proptest! {
        #[test]
        fn never_panics_on_arbitrary_bytes(body in proptest::collection::vec(any::<u8>(), 0..256)) {
            let _ = json_object(&body);
        }

        /// The byte scan agrees with the parsed value's depth on every valid JSON object.
        #[test]
        fn depth_scan_matches_the_parsed_depth(value in json_value()) {
            let body = serde_json::json!({"v": value}).to_string();
            let parsed: Value = serde_json::from_str(&body).unwrap();
            prop_assert_eq!(nesting_depth(body.as_bytes()), value_depth(&parsed));
        }

        /// Any nesting past the limit, of arrays or objects, whatever the padding, is 400
        /// `invalid_parameters`; never a panic or a stack overflow.
        #[test]
        fn deep_bodies_are_always_invalid_parameters(
            extra in 1usize..2000,
            objects in any::<bool>(),
            pad in "[ \t\n]{0,3}",
        ) {
            let levels = MAX_JSON_DEPTH + extra;
            let (open, close) = if objects { ("{\"k\":", "}") } else { ("[", "]") };
            let body = format!(
                "{{\"a\":{pad}{}1{pad}{}}}",
                open.repeat(levels - 1),
                close.repeat(levels - 1)
            );
            let e = json_object(body.as_bytes()).unwrap_err();
            prop_assert_eq!((e.status, e.code.as_str()), (400, "invalid_parameters"));
        }

        /// Whatever the bytes, an error is a 400 or a 413 with a stable code.
        #[test]
        fn every_refusal_is_a_client_error(body in proptest::collection::vec(any::<u8>(), 0..512)) {
            if let Err(e) = json_object(&body) {
                prop_assert!(e.status == 400 || e.status == 413, "{e:?}");
                prop_assert!(["bad_request", "invalid_parameters", "payload_too_large"].contains(&e.code.as_str()));
            }
        }
    }

    fn value_depth(v: &Value) -> usize {
        match v {
            Value::Array(items) => 1 + items.iter().map(value_depth).max().unwrap_or(0),
            Value::Object(map) => 1 + map.values().map(value_depth).max().unwrap_or(0),
            _ => 0,
        }
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            "[\\[\\]{}\"\\\\a-z ]{0,8}".prop_map(Value::String),
        ];
        leaf.prop_recursive(8, 64, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::btree_map("[a-z\\[{\"]{0,4}", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }
}
