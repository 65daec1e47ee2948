//! Checking tool arguments: every problem is an `invalid-argument` error naming the field.

use kg_wit::types::{Error, ErrorCode};
use serde_json::{Map, Value};

pub fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::InvalidArgument, message)
}

/// Parses the arguments text as a JSON object and refuses fields the tool does not take.
pub fn object(tool: &str, text: &str, allowed: &[&str]) -> Result<Map<String, Value>, Error> {
    let args = match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => map,
        Ok(Value::Null) => Map::new(),
        Ok(_) => return Err(invalid(format!("{tool}: arguments must be a JSON object"))),
        Err(e) => {
            return Err(invalid(format!(
                "{tool}: arguments are not valid JSON: {e}"
            )));
        }
    };
    if let Some(unknown) = args.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(invalid(format!(
            "{tool}: unknown argument `{unknown}` (allowed: {})",
            allowed.join(", ")
        )));
    }
    Ok(args)
}

/// The longest string any argument may be: far above any name or query a tool takes, far
/// below the 1 MiB request cap, so an oversized argument is a 400 naming it.
pub const MAX_STRING_CHARS: usize = 10_000;

pub fn optional_string(args: &Map<String, Value>, name: &str) -> Result<Option<String>, Error> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.chars().count() > MAX_STRING_CHARS => Err(invalid(format!(
            "`{name}` is longer than {MAX_STRING_CHARS} characters"
        ))),
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.trim().to_string())),
        Some(Value::String(_)) => Err(invalid(format!("`{name}` must not be empty"))),
        Some(other) => Err(invalid(format!("`{name}` must be a string, got {other}"))),
    }
}

pub fn optional_integer(
    args: &Map<String, Value>,
    name: &str,
    default: i64,
    min: i64,
    max: i64,
) -> Result<i64, Error> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(default),
        // `2.0` is an integer to JSON Schema (and to clients whose numbers are floats).
        Some(Value::Number(n)) => match n.as_i64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 1e15)
                .map(|f| f as i64)
        }) {
            Some(i) if (min..=max).contains(&i) => Ok(i),
            _ => Err(invalid(format!(
                "`{name}` must be an integer from {min} to {max}, got {n}"
            ))),
        },
        Some(other) => Err(invalid(format!("`{name}` must be an integer, got {other}"))),
    }
}
