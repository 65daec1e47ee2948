//! The caller's permissions, re-checked here for every call (DESIGN.md §9): the
//! dispatcher checks its routes, but this component is what writes, so it never relies on
//! that alone.

use kg_actions::access::Refusal;
use kg_identity::{Permission, Role};
use kg_wit::types::{Caller, Error, ErrorCode};

pub fn roles(caller: &Caller) -> Vec<Role> {
    Role::parse_all(caller.roles.iter().map(String::as_str))
}

/// A refusal as the contract's error: `denied` (403) with the API code and the missing
/// permission in the detail.
pub fn denied(refusal: Refusal) -> Error {
    coded(
        ErrorCode::Denied,
        refusal.code,
        refusal.message,
        refusal
            .permission
            .map(|p| serde_json::json!({ "permission": p })),
    )
}

/// An error whose detail carries a finer API code than its class (see kg-http's mapping).
pub fn coded(
    class: ErrorCode,
    code: &str,
    message: String,
    detail: Option<serde_json::Value>,
) -> Error {
    let mut body = match detail {
        Some(serde_json::Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    };
    body.insert("code".into(), serde_json::json!(code));
    let mut error = Error::new(class, message);
    error.detail = Some(serde_json::Value::Object(body).to_string());
    error
}

pub fn require(caller: &Caller, permission: Permission) -> Result<(), Error> {
    kg_actions::access::require(&roles(caller), permission).map_err(denied)
}

/// A subject the log can record: the dispatcher always sends one; an empty one is a bug
/// upstream, refused rather than recorded as nobody.
pub fn subject(caller: &Caller) -> Result<&str, Error> {
    let s = caller.subject.trim();
    if s.is_empty() || s.len() > 256 {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            "the caller's subject must be 1 to 256 bytes",
        ));
    }
    Ok(s)
}
