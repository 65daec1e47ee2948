//! The tools this server offers, and how each call becomes a call of the HTTP route it
//! mirrors. The graph query tools come from the query-tools component at run time (one
//! tool per graph tool, same name and schema, mirroring `POST /tools/{name}`); the action
//! and document tools are fixed here, each over one route of the HTTP API.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Map, Value, json};

/// A graph query tool as the query-tools component lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryTool {
    pub name: String,
    pub description: String,
    /// The tool's parameters as JSON Schema (an object schema).
    pub input_schema: Value,
}

/// An HTTP request of the API: what a tool call is answered as.
#[derive(Debug, Clone, PartialEq)]
pub struct Mirror {
    pub method: &'static str,
    /// Path, with its query string when it has one; segments percent-encoded.
    pub path: String,
    /// The JSON body (POST routes).
    pub body: Option<Value>,
}

/// The tools with a fixed definition: actions and documents. Their names cannot collide
/// with a graph tool's: graph tools are verbs over the graph (`search_instances`, …), and
/// a query tool with one of these names is shadowed (see [`list`]).
const FIXED: &[&str] = &[
    "action_list",
    "action_describe",
    "action_validate",
    "action_plan",
    "action_execute",
    "action_undo",
    "action_log",
    "search_documents",
];

/// Every tool's MCP definition (`tools/list`), for the tools `permitted` lets the caller
/// call, judged on each tool's route ([`route_of`]).
pub fn list(query_tools: &[QueryTool], permitted: &mut dyn FnMut(&Mirror) -> bool) -> Vec<Value> {
    let mut tools: Vec<Value> = query_tools
        .iter()
        .filter(|t| !FIXED.contains(&t.name.as_str()))
        .filter(|t| permitted(&route_of(&t.name)))
        .map(|t| {
            json!({
                "name": t.name,
                "description": t.description,
                "inputSchema": object_schema(t.input_schema.clone()),
                "outputSchema": graph_tool_output(),
                "annotations": { "readOnlyHint": true, "openWorldHint": false },
            })
        })
        .collect();
    tools.extend(
        FIXED
            .iter()
            .filter(|name| permitted(&route_of(name)))
            .map(|name| fixed_definition(name)),
    );
    tools
}

/// The route a tool's calls go to, with placeholder segments: what its permission is
/// judged on before any call (the permission matrix is per route, not per entity).
pub fn route_of(name: &str) -> Mirror {
    let post = |path: &str| Mirror {
        method: "POST",
        path: path.to_string(),
        body: None,
    };
    let get = |path: &str| Mirror {
        method: "GET",
        path: path.to_string(),
        body: None,
    };
    match name {
        "action_list" => get("/actions"),
        "action_describe" => get("/actions/_/_"),
        "action_validate" => post("/actions/_/_/validate"),
        "action_plan" => post("/actions/_/_/plan"),
        "action_execute" => post("/actions/_/_/execute"),
        "action_undo" => post("/actions/log/_/undo"),
        "action_log" => get("/actions/log"),
        "search_documents" => post("/search"),
        other => post(&format!("/tools/{}", segment(other))),
    }
}

/// Why a call's arguments cannot be turned into a request: a tool error the model can read
/// and correct (MCP reports input errors as tool results, not protocol errors).
#[derive(Debug, Clone, PartialEq)]
pub struct BadArguments(pub String);

/// The request a call of `name` with `arguments` is answered as. `None`: no such tool
/// (a graph tool is known by the query-tools component's list, which the caller checks).
pub fn mirror(name: &str, arguments: Map<String, Value>) -> Option<Result<Mirror, BadArguments>> {
    let mut args = arguments;
    let result = match name {
        "action_list" => take_optional(&mut args, "entity_type").and_then(|t| {
            no_more(&args, name)?;
            Ok(Mirror {
                method: "GET",
                path: match t {
                    Some(t) => format!("/actions?entity_type={}", segment(&t)),
                    None => "/actions".into(),
                },
                body: None,
            })
        }),
        "action_describe" => action_path(&mut args, "").and_then(|path| {
            no_more(&args, name)?;
            Ok(Mirror {
                method: "GET",
                path,
                body: None,
            })
        }),
        "action_validate" | "action_plan" | "action_execute" => {
            let verb = &name["action_".len()..];
            action_path(&mut args, verb).and_then(|path| {
                if args.contains_key("stream") {
                    return Err(BadArguments(
                        "`stream` is not an argument of this tool: a batch's progress comes as MCP progress notifications".into(),
                    ));
                }
                Ok(Mirror {
                    method: "POST",
                    path,
                    body: Some(Value::Object(args)),
                })
            })
        }
        "action_undo" => take_required(&mut args, "log_id").map(|id| Mirror {
            method: "POST",
            path: format!("/actions/log/{}/undo", segment(&id)),
            body: Some(Value::Object(args)),
        }),
        "action_log" => log_query(&mut args).and_then(|query| {
            no_more(&args, name)?;
            Ok(Mirror {
                method: "GET",
                path: format!("/actions/log{query}"),
                body: None,
            })
        }),
        "search_documents" => Ok(Mirror {
            method: "POST",
            path: "/search".into(),
            body: Some(Value::Object(args)),
        }),
        _ => return None,
    };
    Some(result)
}

/// A graph tool's call: its arguments are the route's body, checked by the tool itself.
pub fn query_tool_mirror(name: &str, arguments: Map<String, Value>) -> Mirror {
    Mirror {
        method: "POST",
        path: format!("/tools/{}", segment(name)),
        body: Some(Value::Object(arguments)),
    }
}

fn action_path(args: &mut Map<String, Value>, verb: &str) -> Result<String, BadArguments> {
    let entity_type = take_required(args, "entity_type")?;
    let action = take_required(args, "action")?;
    let mut path = format!("/actions/{}/{}", segment(&entity_type), segment(&action));
    if !verb.is_empty() {
        path.push('/');
        path.push_str(verb);
    }
    Ok(path)
}

fn log_query(args: &mut Map<String, Value>) -> Result<String, BadArguments> {
    let mut pairs = Vec::new();
    match args.remove("limit") {
        None | Some(Value::Null) => {}
        Some(Value::Number(n)) if n.is_u64() => pairs.push(format!("limit={n}")),
        Some(other) => {
            return Err(BadArguments(format!(
                "`limit` must be a non-negative integer, got {}",
                crate::jsonrpc::kind(&other)
            )));
        }
    }
    if let Some(cursor) = take_optional(args, "cursor")? {
        pairs.push(format!("cursor={}", segment(&cursor)));
    }
    Ok(if pairs.is_empty() {
        String::new()
    } else {
        format!("?{}", pairs.join("&"))
    })
}

fn take_required(args: &mut Map<String, Value>, key: &str) -> Result<String, BadArguments> {
    take_optional(args, key)?
        .filter(|v| !v.is_empty())
        .ok_or_else(|| BadArguments(format!("`{key}` is required (a non-empty string)")))
}

fn take_optional(args: &mut Map<String, Value>, key: &str) -> Result<Option<String>, BadArguments> {
    match args.remove(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(BadArguments(format!(
            "`{key}` must be a string, got {}",
            crate::jsonrpc::kind(&other)
        ))),
    }
}

fn no_more(args: &Map<String, Value>, tool: &str) -> Result<(), BadArguments> {
    match args.keys().next() {
        None => Ok(()),
        Some(key) => Err(BadArguments(format!(
            "`{key}` is not an argument of {tool}"
        ))),
    }
}

/// Everything but RFC 3986's unreserved characters is encoded: `/`, `?`, `&`, `%` and `+`
/// included, so a value stays one path segment or one query value.
const ENCODED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// A path segment or query value, percent-encoded (the routes decode it).
pub(crate) fn segment(text: &str) -> String {
    utf8_percent_encode(text, ENCODED).to_string()
}

/// MCP requires an object schema; a tool without parameters gets the empty one.
fn object_schema(schema: Value) -> Value {
    match schema {
        Value::Object(map) if map.get("type").and_then(Value::as_str) == Some("object") => {
            Value::Object(map)
        }
        _ => json!({ "type": "object", "properties": {} }),
    }
}

fn fixed_definition(name: &str) -> Value {
    let string = |description: &str| json!({ "type": "string", "description": description });
    let entity_type =
        string("The entity type of the catalog, e.g. `PurchaseOrder` (action_list shows them).");
    let action = string("The action's name in the catalog, e.g. `makePayment`.");
    let ids = json!({
        "type": "array", "items": { "type": "string" }, "minItems": 1,
        "description": "The entities' ids, e.g. [\"PO-1001\"] (at most the catalog's batch limit)."
    });
    let parameters = json!({
        "type": "object",
        "description": "The action's parameters, as its `parameters` in action_describe name them."
    });
    let (title, description, properties, required, hints): (&str, &str, Value, Value, Value) =
        match name {
            "action_list" => (
                "List actions",
                "The business actions of the catalog, optionally of one entity type.",
                json!({ "entity_type": entity_type }),
                json!([]),
                json!({ "readOnlyHint": true }),
            ),
            "action_describe" => (
                "Describe an action",
                "One action's parameters, preconditions, effects, approval rule and batch limits.",
                json!({ "entity_type": entity_type, "action": action }),
                json!(["entity_type", "action"]),
                json!({ "readOnlyHint": true }),
            ),
            "action_validate" => (
                "Check preconditions",
                "Checks an action's preconditions on each entity, changing nothing: which can run, and why the others cannot.",
                json!({ "entity_type": entity_type, "action": action, "entity_ids": ids, "parameters": parameters }),
                json!(["entity_type", "action", "entity_ids"]),
                json!({ "readOnlyHint": true }),
            ),
            "action_plan" => (
                "Plan an action",
                "Whether the caller may run the action on these entities and whether a person must approve it first. When one must, the answer carries an approval token that only a person with the right to approve can redeem with action_execute; nothing runs on a plan.",
                json!({ "entity_type": entity_type, "action": action, "entity_ids": ids, "parameters": parameters }),
                json!(["entity_type", "action", "entity_ids"]),
                json!({ "readOnlyHint": false, "destructiveHint": false }),
            ),
            "action_execute" => (
                "Execute an action",
                "Runs the action on each entity whose preconditions hold, atomically per chunk; each entity succeeds or fails with its reason. An action whose catalog entry needs approval runs only with the `approval_token` of an approved plan (single use, bound to the plan and its approver). Repeating a call with the same `idempotency_key` replays its recorded outcome instead of running twice.",
                json!({
                    "entity_type": entity_type, "action": action, "entity_ids": ids, "parameters": parameters,
                    "idempotency_key": string("A key of the caller's choosing; the same key never runs an entity's action twice."),
                    "approval_token": string("The token of an approved plan (action_plan), for actions that need approval."),
                    "actor": string("Optional: must equal the caller's own subject when given."),
                    "options": {
                        "type": "object",
                        "description": "Batch tuning: max_concurrent (the most chunks in flight; fewer while the graph shows contention), chunk_size, chunk_timeout_ms, max_retries.",
                        "properties": {
                            "max_concurrent": { "type": "integer", "minimum": 1 },
                            "chunk_size": { "type": "integer", "minimum": 1 },
                            "chunk_timeout_ms": { "type": "integer", "minimum": 1 },
                            "max_retries": { "type": "integer", "minimum": 0 }
                        },
                        "additionalProperties": false
                    }
                }),
                json!(["entity_type", "action", "entity_ids"]),
                json!({ "readOnlyHint": false, "destructiveHint": true, "idempotentHint": true }),
            ),
            "action_undo" => (
                "Undo an action",
                "Reverts one action log entry's changes, if nothing changed them since.",
                json!({
                    "log_id": string("The action log entry to undo (action_log, or an execute's outcome)."),
                    "actor": string("Optional: must equal the caller's own subject when given."),
                }),
                json!(["log_id"]),
                json!({ "readOnlyHint": false, "destructiveHint": true }),
            ),
            "action_log" => (
                "Read the action log",
                "The action log, newest first, one page at a time.",
                json!({
                    "limit": { "type": "integer", "minimum": 0, "description": "Entries per page (default 50)." },
                    "cursor": string("The `next_cursor` of the page before."),
                }),
                json!([]),
                json!({ "readOnlyHint": true }),
            ),
            _ => (
                "Search documents",
                "Hybrid search (vector + BM25, fused) over the ingested documents.",
                json!({
                    "query": string("What to look for."),
                    "top_k": { "type": "integer", "minimum": 1, "description": "How many chunks (default 5)." },
                    "vector_weight": { "type": "number" },
                    "bm25_weight": { "type": "number" },
                    "document_ids": { "type": "array", "items": { "type": "string" } },
                    "metadata_filter": { "type": "object", "additionalProperties": { "type": "string" } },
                }),
                json!(["query"]),
                json!({ "readOnlyHint": true }),
            ),
        };
    let mut annotations = hints;
    annotations["openWorldHint"] = json!(false);
    json!({
        "name": name,
        "title": title,
        "description": description,
        "inputSchema": {
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false,
        },
        "outputSchema": output_schema(name),
        "annotations": annotations,
    })
}

/// An object schema that requires `required` and types the properties given (others may
/// come too: answers grow fields without breaking clients).
fn shape(required: &[&str], properties: Value) -> Value {
    json!({ "type": "object", "required": required, "properties": properties })
}

/// What a graph tool answers (`POST /tools/{name}`): the data for the model, a line for a
/// person, the subgraph to draw when the result is one.
fn graph_tool_output() -> Value {
    shape(
        &["tool", "data", "summary", "truncated"],
        json!({
            "tool": { "type": "string" },
            "data": {},
            "summary": { "type": "string" },
            "graph_data": {
                "type": ["object", "null"],
                "properties": {
                    "nodes": { "type": "array", "items": shape(&["id"], json!({"id": {"type": "string"}})) },
                    "edges": { "type": "array", "items": shape(&["source", "target"], json!({})) },
                },
            },
            "truncated": { "type": "boolean" },
        }),
    )
}

/// The structured result of each fixed tool: the JSON its route answers (docs/api.md).
fn output_schema(name: &str) -> Value {
    let string = json!({ "type": "string" });
    let outcome = shape(
        &["entity_id", "success"],
        json!({
            "entity_id": string, "success": { "type": "boolean" },
            "log_id": { "type": ["string", "null"] }, "replayed": { "type": "boolean" },
            "reason": string, "error": string,
        }),
    );
    match name {
        "action_list" => shape(
            &["actions"],
            json!({ "actions": { "type": "array", "items": shape(
                &["entity_type", "name", "requires_approval"],
                json!({ "entity_type": string, "name": string, "requires_approval": { "type": "boolean" } }),
            ) } }),
        ),
        "action_describe" => shape(
            &["entity_type", "name"],
            json!({ "entity_type": string, "name": string, "parameters": { "type": "array" } }),
        ),
        "action_validate" => shape(
            &[
                "entity_type",
                "action_name",
                "total",
                "can_execute",
                "results",
            ],
            json!({
                "total": { "type": "integer" }, "can_execute": { "type": "integer" },
                "results": { "type": "array", "items": shape(
                    &["entity_id", "found", "can_execute", "checks"],
                    json!({ "entity_id": string, "found": { "type": "boolean" }, "can_execute": { "type": "boolean" }, "checks": { "type": "array" } }),
                ) },
            }),
        ),
        "action_plan" => shape(
            &["approval_required", "plan"],
            json!({
                "approval_required": { "type": "boolean" },
                "approval_token": { "type": ["string", "null"] },
                "plan": shape(
                    &["entity_type", "action_name", "entity_ids", "total"],
                    json!({ "entity_ids": { "type": "array", "items": string }, "total": { "type": "integer" } }),
                ),
            }),
        ),
        "action_execute" => shape(
            &[
                "entity_type",
                "action_name",
                "total",
                "succeeded",
                "failed",
                "successes",
                "failures",
            ],
            json!({
                "total": { "type": "integer" }, "succeeded": { "type": "integer" }, "failed": { "type": "integer" },
                "successes": { "type": "array", "items": outcome }, "failures": { "type": "array", "items": outcome },
            }),
        ),
        "action_undo" => outcome,
        "action_log" => shape(
            &["entries"],
            json!({
                "entries": { "type": "array", "items": shape(
                    &["id", "entity_type", "action_name", "entity_id", "actor", "at"],
                    json!({ "id": string, "actor": string }),
                ) },
                "next_cursor": { "type": ["string", "null"] },
            }),
        ),
        _ => shape(
            &["query", "hits"],
            json!({ "query": string, "hits": { "type": "array" } }),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn action_tools_become_their_routes_with_the_rest_of_the_arguments_as_body() {
        let m = mirror(
            "action_execute",
            args(json!({"entity_type": "PurchaseOrder", "action": "makePayment", "entity_ids": ["PO-1"], "idempotency_key": "k"})),
        )
        .unwrap()
        .unwrap();
        assert_eq!(m.method, "POST");
        assert_eq!(m.path, "/actions/PurchaseOrder/makePayment/execute");
        assert_eq!(
            m.body,
            Some(json!({"entity_ids": ["PO-1"], "idempotency_key": "k"}))
        );

        let m = mirror("action_undo", args(json!({"log_id": "LOG 1/2"})))
            .unwrap()
            .unwrap();
        assert_eq!(m.path, "/actions/log/LOG%201%2F2/undo");
        assert_eq!(m.body, Some(json!({})));

        let m = mirror(
            "action_log",
            args(json!({"limit": 5, "cursor": "2026|LOG-1"})),
        )
        .unwrap()
        .unwrap();
        assert_eq!(m.path, "/actions/log?limit=5&cursor=2026%7CLOG-1");
        let m = mirror(
            "action_list",
            args(json!({"entity_type": "Purchase Order"})),
        )
        .unwrap()
        .unwrap();
        assert_eq!(m.path, "/actions?entity_type=Purchase%20Order");
        assert_eq!(
            mirror("action_list", Map::new()).unwrap().unwrap().path,
            "/actions"
        );
    }

    #[test]
    fn bad_arguments_are_named() {
        let bad = |name: &str, a: Value| mirror(name, args(a)).unwrap().unwrap_err().0;
        assert!(bad("action_plan", json!({"action": "x"})).contains("`entity_type` is required"));
        assert!(bad("action_plan", json!({"entity_type": 3, "action": "x"})).contains("a number"));
        assert!(
            bad(
                "action_execute",
                json!({"entity_type": "a", "action": "b", "stream": true})
            )
            .contains("stream")
        );
        assert!(bad("action_list", json!({"extra": 1})).contains("`extra`"));
        assert!(bad("action_log", json!({"limit": -1})).contains("limit"));
        assert!(mirror("no_such_tool", Map::new()).is_none());
    }

    #[test]
    fn a_path_segment_cannot_escape_its_route() {
        let m = mirror(
            "action_describe",
            args(json!({"entity_type": "../tools", "action": "x?y"})),
        )
        .unwrap()
        .unwrap();
        assert_eq!(m.path, "/actions/..%2Ftools/x%3Fy");
        assert_eq!(query_tool_mirror("a/b", Map::new()).path, "/tools/a%2Fb");
    }

    #[test]
    fn the_list_holds_what_the_caller_may_call() {
        let graph = vec![QueryTool {
            name: "search_instances".into(),
            description: "d".into(),
            input_schema: json!({"type": "object", "properties": {"q": {"type": "string"}}}),
        }];
        let all = list(&graph, &mut |_| true);
        assert_eq!(all.len(), 1 + FIXED.len());
        for tool in &all {
            assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
            assert_eq!(tool["outputSchema"]["type"], "object", "{tool}");
            assert!(tool["description"].as_str().is_some_and(|d| !d.is_empty()));
        }
        // A reader that may not run actions sees neither validate, plan, execute nor undo.
        let read_only = list(&graph, &mut |m| {
            m.method == "GET" || m.path.starts_with("/tools/") || m.path == "/search"
        });
        let names: Vec<&str> = read_only
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        assert_eq!(
            names,
            [
                "search_instances",
                "action_list",
                "action_describe",
                "action_log",
                "search_documents"
            ]
        );
    }

    #[test]
    fn a_schema_that_is_not_an_object_schema_becomes_the_empty_one() {
        assert_eq!(
            object_schema(json!(null)),
            json!({"type": "object", "properties": {}})
        );
        assert_eq!(
            object_schema(json!({"type": "object"})),
            json!({"type": "object"})
        );
    }
}
