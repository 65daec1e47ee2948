//! The 2026-07-28 revision's per-request envelope: no `initialize`, every request carries
//! its revision, client info and capabilities in `params._meta` and repeats its revision,
//! method and target name in headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`), so
//! a proxy can route it without reading the body. Results say `resultType`, and the
//! cacheable ones how long they may be cached.

use crate::jsonrpc::{INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR};
use serde_json::{Map, Value, json};

/// The per-request revisions served.
pub const MODERN: &[&str] = &["2026-07-28"];

pub const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
pub const CLIENT_CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
pub const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";

/// The request's headers disagree with its body.
pub const HEADER_MISMATCH: i64 = -32020;
/// The request's revision is not served; `data.supported` lists those that are.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// The routing headers of a request.
#[derive(Debug, Default, Clone, Copy)]
pub struct Headers<'a> {
    pub protocol_version: Option<&'a str>,
    pub method: Option<&'a str>,
    pub name: Option<&'a str>,
}

/// Whether a request speaks the per-request revision: it asks `server/discover`, carries
/// the envelope's revision key, or names a per-request revision in its header.
pub fn is_modern(method: &str, params: &Map<String, Value>, headers: Headers) -> bool {
    method == "server/discover"
        || params
            .get("_meta")
            .and_then(|m| m.get(PROTOCOL_VERSION_KEY))
            .is_some()
        || headers
            .protocol_version
            .is_some_and(|v| MODERN.contains(&v.trim()))
}

/// Checks the envelope, in the specification's order (shape, headers, revision): the
/// first failure is the answer's error (code, message, data).
pub fn check(
    method: &str,
    params: &Map<String, Value>,
    headers: Headers,
    all_supported: &[&str],
) -> Result<(), (i64, String, Option<Value>)> {
    let Some(meta) = params.get("_meta").and_then(Value::as_object) else {
        return Err((
            INVALID_PARAMS,
            format!(
                "params._meta must be an object carrying `{PROTOCOL_VERSION_KEY}` and `{CLIENT_CAPABILITIES_KEY}`"
            ),
            None,
        ));
    };
    let missing: Vec<&str> = [PROTOCOL_VERSION_KEY, CLIENT_CAPABILITIES_KEY]
        .into_iter()
        .filter(|k| !meta.contains_key(*k))
        .collect();
    if !missing.is_empty() {
        return Err((
            INVALID_PARAMS,
            format!("params._meta lacks {}", missing.join(" and ")),
            None,
        ));
    }
    let version = &meta[PROTOCOL_VERSION_KEY];
    if headers.protocol_version.map(str::trim) != version.as_str() {
        return Err((
            HEADER_MISMATCH,
            "the MCP-Protocol-Version header does not match params._meta's protocol version".into(),
            None,
        ));
    }
    if headers.method.map(str::trim) != Some(method) {
        return Err((
            HEADER_MISMATCH,
            "the Mcp-Method header does not match the body's method".into(),
            None,
        ));
    }
    let name_key = match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    };
    if let Some(key) = name_key
        && let Some(Value::String(named)) = params.get(key)
        && headers.name.map(str::trim) != Some(named.as_str())
    {
        return Err((
            HEADER_MISMATCH,
            format!("the Mcp-Name header does not match the body's `{key}`"),
            None,
        ));
    }
    let Some(version) = version.as_str() else {
        return Err((
            INVALID_PARAMS,
            "the protocol version must be a string".into(),
            None,
        ));
    };
    if !MODERN.contains(&version) {
        return Err((
            UNSUPPORTED_PROTOCOL_VERSION,
            format!("protocol version `{version}` is not served here"),
            Some(json!({ "supported": all_supported, "requested": version })),
        ));
    }
    Ok(())
}

/// The HTTP status of an error answer in this revision (its transport's table; other codes
/// ride a `200`).
pub fn status_of(code: i64) -> u16 {
    match code {
        PARSE_ERROR
        | INVALID_REQUEST
        | INVALID_PARAMS
        | HEADER_MISMATCH
        | UNSUPPORTED_PROTOCOL_VERSION => 400,
        METHOD_NOT_FOUND => 404,
        _ => 200,
    }
}

/// A result as this revision shapes it: `resultType`, the server's identity in `_meta`,
/// and for lists and reads a cache hint. `private` and `0`: what a caller sees follows
/// their permissions, and the catalog and documents change while the app runs.
pub fn decorate(method: &str, mut result: Value, server_info: &Value) -> Value {
    if let Value::Object(map) = &mut result {
        map.insert("resultType".into(), json!("complete"));
        let meta = map.entry("_meta").or_insert_with(|| json!({}));
        if let Value::Object(meta) = meta {
            meta.insert(SERVER_INFO_KEY.into(), server_info.clone());
        }
        let cacheable = matches!(
            method,
            "server/discover"
                | "tools/list"
                | "prompts/list"
                | "resources/list"
                | "resources/templates/list"
                | "resources/read"
        );
        if cacheable {
            map.insert("cacheScope".into(), json!("private"));
            map.insert("ttlMs".into(), json!(0));
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(version: &str) -> Map<String, Value> {
        json!({"name": "t", "_meta": {PROTOCOL_VERSION_KEY: version, CLIENT_CAPABILITIES_KEY: {}}})
            .as_object()
            .cloned()
            .unwrap()
    }

    fn headers<'a>(version: &'a str, method: &'a str, name: Option<&'a str>) -> Headers<'a> {
        Headers {
            protocol_version: Some(version),
            method: Some(method),
            name,
        }
    }

    #[test]
    fn a_complete_envelope_passes() {
        let h = headers("2026-07-28", "tools/call", Some("t"));
        assert_eq!(
            check("tools/call", &params("2026-07-28"), h, MODERN),
            Ok(())
        );
    }

    #[test]
    fn each_rung_names_its_fault() {
        let code = |method: &str, p: &Map<String, Value>, h: Headers| {
            check(method, p, h, MODERN).unwrap_err().0
        };
        let h = headers("2026-07-28", "tools/call", Some("t"));
        assert_eq!(code("tools/call", &Map::new(), h), INVALID_PARAMS);
        let mut no_caps = params("2026-07-28");
        no_caps["_meta"]
            .as_object_mut()
            .unwrap()
            .remove(CLIENT_CAPABILITIES_KEY);
        assert_eq!(code("tools/call", &no_caps, h), INVALID_PARAMS);
        assert_eq!(
            code(
                "tools/call",
                &params("2026-07-28"),
                headers("2025-11-25", "tools/call", Some("t"))
            ),
            HEADER_MISMATCH
        );
        assert_eq!(
            code(
                "tools/call",
                &params("2026-07-28"),
                headers("2026-07-28", "tools/list", Some("t"))
            ),
            HEADER_MISMATCH
        );
        assert_eq!(
            code(
                "tools/call",
                &params("2026-07-28"),
                headers("2026-07-28", "tools/call", Some("u"))
            ),
            HEADER_MISMATCH
        );
        assert_eq!(
            code(
                "tools/call",
                &params("2026-07-28"),
                headers("2026-07-28", "tools/call", None)
            ),
            HEADER_MISMATCH
        );
        let err = check(
            "ping",
            &params("2099-01-01"),
            headers("2099-01-01", "ping", None),
            &["2026-07-28", "2025-11-25"],
        )
        .unwrap_err();
        assert_eq!(err.0, UNSUPPORTED_PROTOCOL_VERSION);
        assert_eq!(
            err.2.unwrap()["supported"],
            json!(["2026-07-28", "2025-11-25"])
        );
    }

    #[test]
    fn results_say_their_type_and_lists_their_cache_hint() {
        let info = json!({"name": "kg-agent"});
        let listed = decorate("tools/list", json!({"tools": []}), &info);
        assert_eq!(listed["resultType"], "complete");
        assert_eq!(
            (listed["cacheScope"].clone(), listed["ttlMs"].clone()),
            (json!("private"), json!(0))
        );
        assert_eq!(listed["_meta"][SERVER_INFO_KEY], info);
        let called = decorate("tools/call", json!({"content": []}), &info);
        assert!(called.get("cacheScope").is_none());
    }

    #[test]
    fn statuses_follow_the_transports_table() {
        assert_eq!(status_of(METHOD_NOT_FOUND), 404);
        assert_eq!(status_of(HEADER_MISMATCH), 400);
        assert_eq!(status_of(-32603), 200);
    }
}
