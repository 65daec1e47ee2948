//! One POST to `/mcp`, answered: the message parsed, the revision checked, the method run
//! against a [`Backend`], and the HTTP status and JSON body to send.

use crate::jsonrpc::{
    self, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, Incoming, METHOD_NOT_FOUND,
};
use crate::tools::{self, Mirror, QueryTool};
use crate::{envelope, prompts, resources, version};
use serde_json::{Map, Value, json};

/// What the server needs from its host: the graph tools, the permission matrix, and the
/// HTTP API's handlers.
pub trait Backend {
    /// The graph query tools (the query-tools component's list).
    fn query_tools(&mut self) -> Result<Vec<QueryTool>, String>;
    /// Whether the caller's credential may call this route (its permission, before any
    /// argument is looked at).
    fn permitted(&mut self, route: &Mirror) -> bool;
    /// The HTTP API's answer to this request, made with the caller's credential: status
    /// and JSON body, exactly as the route answers it (its permission check included).
    fn call(&mut self, request: &Mirror) -> (u16, Value);
}

/// The request's MCP headers.
#[derive(Debug, Default, Clone, Copy)]
pub struct Head<'a> {
    /// `MCP-Protocol-Version`.
    pub protocol_version: Option<&'a str>,
    /// `Mcp-Method` (2026-07-28).
    pub method: Option<&'a str>,
    /// `Mcp-Name` (2026-07-28).
    pub name: Option<&'a str>,
}

impl Head<'_> {
    fn envelope(&self) -> envelope::Headers<'_> {
        envelope::Headers {
            protocol_version: self.protocol_version,
            method: self.method,
            name: self.name,
        }
    }
}

/// The HTTP answer: `body` is `None` for `202 Accepted` (a notification or a response).
#[derive(Debug, Clone, PartialEq)]
pub struct HttpAnswer {
    pub status: u16,
    pub body: Option<Value>,
}

impl HttpAnswer {
    fn json(status: u16, body: Value) -> HttpAnswer {
        HttpAnswer {
            status,
            body: Some(body),
        }
    }
}

/// What a posted message comes to.
#[derive(Debug, Clone, PartialEq)]
pub enum Handled {
    /// Answered in one piece.
    Answer(HttpAnswer),
    /// A call of `action_execute` that asked for progress (`_meta.progressToken`): the host
    /// runs `request` as a batch and streams it (`text/event-stream`): a
    /// [`progress`] notification per finished entity, then [`call_response`] for `id`.
    Stream {
        id: Value,
        progress_token: Value,
        request: Mirror,
        /// Whether the call came in the 2026-07-28 envelope (its result is shaped so).
        modern: bool,
    },
}

impl Handled {
    /// The one-piece answer (`None` for a stream).
    pub fn answer(self) -> Option<HttpAnswer> {
        match self {
            Handled::Answer(answer) => Some(answer),
            Handled::Stream { .. } => None,
        }
    }
}

/// Answers one posted message.
pub fn handle_post(body: &[u8], head: Head, backend: &mut dyn Backend) -> Handled {
    let (id, method, params) = match parse(body) {
        Ok(request) => request,
        Err(answer) => return Handled::Answer(answer),
    };
    let modern = envelope::is_modern(&method, &params, head.envelope());
    if modern {
        if let Err((code, message, data)) =
            envelope::check(&method, &params, head.envelope(), &all_supported())
        {
            let body = jsonrpc::error(&id, code, &message, data);
            return Handled::Answer(HttpAnswer::json(envelope::status_of(code), body));
        }
    } else if method != "initialize" && !version::header_accepted(head.protocol_version) {
        let requested = head.protocol_version.unwrap_or_default();
        return Handled::Answer(HttpAnswer::json(
            400,
            jsonrpc::error(
                &id,
                INVALID_REQUEST,
                &format!(
                    "MCP-Protocol-Version `{requested}` is not served here; this server speaks {}",
                    all_supported().join(", ")
                ),
                Some(json!({ "supported": all_supported(), "requested": requested })),
            ),
        ));
    }
    if method == "tools/call"
        && let Some((progress_token, request)) = streamed_call(&params)
    {
        return Handled::Stream {
            id,
            progress_token,
            request,
            modern,
        };
    }
    Handled::Answer(answer(id, &method, &params, modern, backend))
}

/// Every revision served, newest first: the per-request ones, then the handshake's.
pub fn all_supported() -> Vec<&'static str> {
    envelope::MODERN
        .iter()
        .chain(version::SUPPORTED)
        .copied()
        .collect()
}

/// A call to stream: `action_execute` with well-formed arguments and a progress token.
/// Anything else (bad arguments included) is answered in one piece.
fn streamed_call(params: &Map<String, Value>) -> Option<(Value, Mirror)> {
    if params.get("name").and_then(Value::as_str) != Some("action_execute") {
        return None;
    }
    let token = params.get("_meta")?.get("progressToken")?;
    if !(token.is_string() || token.is_i64() || token.is_u64()) {
        return None;
    }
    let request = tools::mirror("action_execute", arguments(params).ok()?)?.ok()?;
    Some((token.clone(), request))
}

type Request = (Value, String, Map<String, Value>);

fn parse(body: &[u8]) -> Result<Request, HttpAnswer> {
    match jsonrpc::parse(body) {
        // A body that is no request at all is a transport fault (400); a request whose
        // params are malformed still gets its JSON-RPC error as an answer.
        Err(rejection) if rejection.id.is_null() => Err(HttpAnswer::json(400, rejection.to_json())),
        Err(rejection) => Err(HttpAnswer::json(200, rejection.to_json())),
        Ok(Incoming::Notification { .. } | Incoming::Response) => Err(HttpAnswer {
            status: 202,
            body: None,
        }),
        Ok(Incoming::Request { id, method, params }) => Ok((id, method, params)),
    }
}

fn answer(
    id: Value,
    method: &str,
    params: &Map<String, Value>,
    modern: bool,
    backend: &mut dyn Backend,
) -> HttpAnswer {
    let outcome = match method {
        "initialize" => Ok(initialize(params)),
        "server/discover" => Ok(discover()),
        "ping" => Ok(json!({})),
        "tools/list" => list_tools(backend),
        "tools/call" => call_tool(params, backend),
        "resources/list" => Ok(json!({
            "resources": resources::list(&mut |route| backend.permitted(route))
        })),
        "resources/templates/list" => Ok(json!({
            "resourceTemplates": resources::templates(&mut |route| backend.permitted(route))
        })),
        "resources/read" => read_resource(params, backend),
        "prompts/list" => Ok(json!({ "prompts": prompts::list() })),
        "prompts/get" => get_prompt(params),
        other => Err((
            METHOD_NOT_FOUND,
            format!(
                "`{other}` is not a method of this server (it offers tools, resources and prompts)"
            ),
        )),
    };
    match outcome {
        Ok(result) if modern => HttpAnswer::json(
            200,
            jsonrpc::result(&id, envelope::decorate(method, result, &server_info())),
        ),
        Ok(result) => HttpAnswer::json(200, jsonrpc::result(&id, result)),
        Err((code, message)) => HttpAnswer::json(
            if modern {
                envelope::status_of(code)
            } else {
                200
            },
            jsonrpc::error(&id, code, &message, None),
        ),
    }
}

fn capabilities() -> Value {
    json!({
        "tools": { "listChanged": false },
        "resources": { "subscribe": false, "listChanged": false },
        "prompts": { "listChanged": false },
    })
}

fn server_info() -> Value {
    json!({
        "name": "kg-agent",
        "title": "kg-agent: a knowledge graph's tools and business actions",
        "version": env!("CARGO_PKG_VERSION"),
    })
}

/// `server/discover` (2026-07-28): what `initialize` told a handshake client, asked for
/// whenever a client wants it, with every revision served.
fn discover() -> Value {
    json!({
        "supportedVersions": all_supported(),
        "capabilities": capabilities(),
        "instructions": INSTRUCTIONS,
    })
}

fn initialize(params: &Map<String, Value>) -> Value {
    let requested = params.get("protocolVersion").and_then(Value::as_str);
    json!({
        "protocolVersion": version::negotiate(requested),
        "capabilities": capabilities(),
        "serverInfo": server_info(),
        "instructions": INSTRUCTIONS,
    })
}

const INSTRUCTIONS: &str = "Graph tools answer questions over the knowledge graph \
(start with get_ontology_classes or search_instances). Business actions go through the catalog: \
action_list and action_describe say what exists, action_validate checks preconditions, \
action_plan says whether a person must approve, action_execute runs it (with the plan's \
approval_token when one is needed; give every execute an idempotency_key), action_undo \
reverts a log entry. Every call acts as your credential's subject and is allowed only \
what that subject may do over the HTTP API.";

type Outcome = Result<Value, (i64, String)>;

fn list_tools(backend: &mut dyn Backend) -> Outcome {
    let graph = backend.query_tools().map_err(component_failed)?;
    Ok(json!({ "tools": tools::list(&graph, &mut |route| backend.permitted(route)) }))
}

fn call_tool(params: &Map<String, Value>, backend: &mut dyn Backend) -> Outcome {
    let name = required_string(params, "name")?;
    let arguments = arguments(params)?;
    let request = match tools::mirror(name, arguments.clone()) {
        Some(Ok(request)) => request,
        Some(Err(bad)) => {
            return Ok(tool_error(
                &json!({"error": {"code": "bad_request", "message": bad.0}}),
            ));
        }
        None => {
            let graph = backend.query_tools().map_err(component_failed)?;
            if !graph.iter().any(|t| t.name == name) {
                return Err((
                    INVALID_PARAMS,
                    format!("no tool named `{name}` (tools/list has them)"),
                ));
            }
            tools::query_tool_mirror(name, arguments)
        }
    };
    let (status, body) = backend.call(&request);
    Ok(tool_result(status, body))
}

/// The specification's "resource not found" error.
pub const RESOURCE_NOT_FOUND: i64 = -32002;

fn read_resource(params: &Map<String, Value>, backend: &mut dyn Backend) -> Outcome {
    let uri = required_string(params, "uri")?;
    let not_found = || (RESOURCE_NOT_FOUND, format!("no resource at `{uri}`"));
    let request = resources::mirror(uri).ok_or_else(not_found)?;
    let (status, body) = backend.call(&request);
    match status {
        200..=299 => Ok(json!({
            "contents": [{ "uri": uri, "mimeType": "application/json", "text": body.to_string() }]
        })),
        404 => Err(not_found()),
        _ => Err((
            if status >= 500 {
                INTERNAL_ERROR
            } else {
                INVALID_PARAMS
            },
            format!(
                "`{uri}` could not be read: {}",
                body["error"]["message"].as_str().unwrap_or("error")
            ),
        )),
    }
}

fn get_prompt(params: &Map<String, Value>) -> Outcome {
    let name = required_string(params, "name")?;
    let arguments = arguments(params)?;
    prompts::get(name, &arguments).map_err(|message| (INVALID_PARAMS, message))
}

/// The string param `key` (a tool's or prompt's name, a resource's URI).
fn required_string<'a>(
    params: &'a Map<String, Value>,
    key: &str,
) -> Result<&'a str, (i64, String)> {
    match params.get(key) {
        Some(Value::String(value)) => Ok(value),
        _ => Err((INVALID_PARAMS, format!("`{key}` (a string) is required"))),
    }
}

/// The `arguments` of a tool call or prompt: an object, absent meaning empty.
fn arguments(params: &Map<String, Value>) -> Result<Map<String, Value>, (i64, String)> {
    match params.get("arguments") {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(arguments)) => Ok(arguments.clone()),
        Some(other) => Err((
            INVALID_PARAMS,
            format!(
                "`arguments` must be an object, got {}",
                jsonrpc::kind(other)
            ),
        )),
    }
}

/// A route's answer as a tool result: the JSON body as text and as `structuredContent`
/// when it succeeded, a tool error otherwise.
pub fn tool_result(status: u16, body: Value) -> Value {
    if (200..300).contains(&status) {
        json!({
            "content": [{ "type": "text", "text": body.to_string() }],
            "structuredContent": body,
            "isError": false,
        })
    } else {
        tool_error(&body)
    }
}

/// The response that ends a streamed call: the route's answer as a tool result, shaped
/// for the call's revision.
pub fn call_response(id: &Value, status: u16, body: Value, modern: bool) -> Value {
    let result = tool_result(status, body);
    if modern {
        jsonrpc::result(id, envelope::decorate("tools/call", result, &server_info()))
    } else {
        jsonrpc::result(id, result)
    }
}

/// A `notifications/progress` of a streamed call.
pub fn progress(token: &Value, progress: u32, total: u32, message: &str) -> Value {
    json!({
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": { "progressToken": token, "progress": progress, "total": total, "message": message },
    })
}

/// One JSON-RPC message as an SSE event of a Streamable HTTP response.
pub fn sse_message(message: &Value) -> Vec<u8> {
    format!("event: message\ndata: {message}\n\n").into_bytes()
}

/// A call the API refused or could not complete: the model sees the API's JSON error
/// (code, message, detail) and can correct its call; the protocol exchange itself worked.
fn tool_error(body: &Value) -> Value {
    json!({
        "content": [{ "type": "text", "text": body.to_string() }],
        "isError": true,
    })
}

fn component_failed(message: String) -> (i64, String) {
    (
        INTERNAL_ERROR,
        format!("the graph tools could not be listed: {message}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A backend over a fixed tool list that records the requests it is asked to answer.
    struct Fake {
        calls: Vec<Mirror>,
        may_execute: bool,
    }

    impl Backend for Fake {
        fn query_tools(&mut self) -> Result<Vec<QueryTool>, String> {
            Ok(vec![QueryTool {
                name: "search_instances".into(),
                description: "Finds entities.".into(),
                input_schema: json!({"type": "object", "properties": {"query": {"type": "string"}}}),
            }])
        }
        fn permitted(&mut self, route: &Mirror) -> bool {
            self.may_execute || route.method == "GET" || !route.path.starts_with("/actions")
        }
        fn call(&mut self, request: &Mirror) -> (u16, Value) {
            self.calls.push(request.clone());
            if !self.permitted(request) {
                return (
                    403,
                    json!({"error": {"code": "forbidden", "message": "no"}}),
                );
            }
            (200, json!({"answered": request.path}))
        }
    }

    fn fake(may_execute: bool) -> Fake {
        Fake {
            calls: vec![],
            may_execute,
        }
    }

    fn post(backend: &mut Fake, version: Option<&str>, body: Value) -> HttpAnswer {
        handle_post(
            body.to_string().as_bytes(),
            Head {
                protocol_version: version,
                ..Head::default()
            },
            backend,
        )
        .answer()
        .expect("an answer in one piece")
    }

    fn request(method: &str, params: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
    }

    #[test]
    fn initialize_settles_a_revision_and_offers_tools_only() {
        let answer = post(
            &mut fake(true),
            None,
            request(
                "initialize",
                json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
            ),
        );
        assert_eq!(answer.status, 200);
        let result = &answer.body.as_ref().unwrap()["result"];
        assert_eq!(result["protocolVersion"], "2025-06-18");
        assert_eq!(
            result["capabilities"]["tools"],
            json!({"listChanged": false})
        );
        assert!(result["capabilities"]["resources"].is_object());
        assert!(result["capabilities"]["prompts"].is_object());
        assert_eq!(result["serverInfo"]["name"], "kg-agent");
        let newer = post(
            &mut fake(true),
            None,
            request("initialize", json!({"protocolVersion": "2099-01-01"})),
        );
        assert_eq!(
            newer.body.unwrap()["result"]["protocolVersion"],
            version::LATEST
        );
    }

    #[test]
    fn notifications_and_responses_are_accepted_without_a_body() {
        let answer = post(
            &mut fake(true),
            Some("2025-11-25"),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        );
        assert_eq!(
            answer,
            HttpAnswer {
                status: 202,
                body: None
            }
        );
    }

    #[test]
    fn a_per_request_revision_without_its_envelope_is_a_400() {
        let answer = post(
            &mut fake(true),
            Some("2026-07-28"),
            request("tools/list", json!({})),
        );
        assert_eq!(answer.status, 400);
        assert_eq!(answer.body.unwrap()["error"]["code"], INVALID_PARAMS);
    }

    #[test]
    fn an_unserved_revision_is_a_400_that_names_the_served_ones() {
        let answer = post(
            &mut fake(true),
            Some("1999-01-01"),
            request("tools/list", json!({})),
        );
        assert_eq!(answer.status, 400);
        let body = answer.body.unwrap();
        assert_eq!(body["id"], 7);
        assert_eq!(body["error"]["code"], INVALID_REQUEST);
        assert_eq!(body["error"]["data"]["supported"], json!(all_supported()));
    }

    #[test]
    fn malformed_bodies_are_400_json_rpc_errors() {
        let answer = handle_post(b"{not json", Head::default(), &mut fake(true))
            .answer()
            .unwrap();
        assert_eq!(answer.status, 400);
        assert_eq!(answer.body.unwrap()["error"]["code"], jsonrpc::PARSE_ERROR);
    }

    #[test]
    fn unknown_methods_and_tools_are_protocol_errors() {
        let answer = post(
            &mut fake(true),
            None,
            request("resources/subscribe", json!({})),
        );
        assert_eq!(answer.body.unwrap()["error"]["code"], METHOD_NOT_FOUND);
        let answer = post(
            &mut fake(true),
            None,
            request("tools/call", json!({"name": "drop_database"})),
        );
        assert_eq!(answer.body.unwrap()["error"]["code"], INVALID_PARAMS);
        let answer = post(
            &mut fake(true),
            None,
            request("tools/call", json!({"arguments": {}})),
        );
        assert_eq!(answer.body.unwrap()["error"]["code"], INVALID_PARAMS);
        let answer = post(
            &mut fake(true),
            None,
            request(
                "tools/call",
                json!({"name": "search_instances", "arguments": []}),
            ),
        );
        assert_eq!(answer.body.unwrap()["error"]["code"], INVALID_PARAMS);
    }

    #[test]
    fn a_call_is_answered_by_its_route_and_carries_the_answer_as_structured_content() {
        let mut backend = fake(true);
        let answer = post(
            &mut backend,
            Some("2025-11-25"),
            request(
                "tools/call",
                json!({"name": "search_instances", "arguments": {"query": "ACME"}}),
            ),
        );
        let result = &answer.body.as_ref().unwrap()["result"];
        assert_eq!(result["isError"], false);
        assert_eq!(
            result["structuredContent"],
            json!({"answered": "/tools/search_instances"})
        );
        let text: Value =
            serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(text, result["structuredContent"]);
        assert_eq!(backend.calls[0].body, Some(json!({"query": "ACME"})));
    }

    #[test]
    fn a_refused_call_is_a_tool_error_with_the_apis_reason_and_bad_arguments_reach_no_route() {
        let mut backend = fake(false);
        let answer = post(
            &mut backend,
            None,
            request(
                "tools/call",
                json!({"name": "action_execute", "arguments": {"entity_type": "PurchaseOrder", "action": "makePayment", "entity_ids": ["PO-1"]}}),
            ),
        );
        let result = &answer.body.as_ref().unwrap()["result"];
        assert_eq!(result["isError"], true);
        assert!(
            result["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("forbidden")
        );
        let answer = post(
            &mut backend,
            None,
            request(
                "tools/call",
                json!({"name": "action_plan", "arguments": {}}),
            ),
        );
        assert_eq!(answer.body.unwrap()["result"]["isError"], true);
        assert_eq!(
            backend.calls.len(),
            1,
            "the call without arguments reached no route"
        );
    }

    #[test]
    fn the_tool_list_follows_the_callers_permissions() {
        let names = |may_execute| {
            let answer = post(
                &mut fake(may_execute),
                None,
                request("tools/list", json!({})),
            );
            answer.body.unwrap()["result"]["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].as_str().unwrap().to_string())
                .collect::<Vec<_>>()
        };
        assert!(names(true).contains(&"action_execute".to_string()));
        assert!(!names(false).contains(&"action_execute".to_string()));
        assert!(names(false).contains(&"search_instances".to_string()));
    }

    #[test]
    fn a_per_request_client_discovers_and_calls_without_a_handshake() {
        let meta = json!({envelope::PROTOCOL_VERSION_KEY: "2026-07-28", envelope::CLIENT_CAPABILITIES_KEY: {}});
        let head = |method: &'static str, name: Option<&'static str>| Head {
            protocol_version: Some("2026-07-28"),
            method: Some(method),
            name,
        };
        let send = |method: &'static str, name: Option<&'static str>, params: Value| {
            let body = request(method, params);
            handle_post(
                body.to_string().as_bytes(),
                head(method, name),
                &mut fake(true),
            )
            .answer()
            .unwrap()
        };
        let found = send("server/discover", None, json!({"_meta": meta}));
        let result = &found.body.as_ref().unwrap()["result"];
        assert_eq!(result["supportedVersions"][0], "2026-07-28");
        assert!(
            result["supportedVersions"]
                .as_array()
                .unwrap()
                .contains(&json!("2025-06-18"))
        );
        assert_eq!(result["resultType"], "complete");
        assert_eq!(
            result["_meta"][envelope::SERVER_INFO_KEY]["name"],
            "kg-agent"
        );
        let called = send(
            "tools/call",
            Some("search_instances"),
            json!({"name": "search_instances", "arguments": {}, "_meta": meta}),
        );
        let result = &called.body.as_ref().unwrap()["result"];
        assert_eq!(
            (result["isError"].clone(), result["resultType"].clone()),
            (json!(false), json!("complete"))
        );
        // Its errors carry the transport's statuses; a mismatched header is refused.
        let unknown = send("nope/nothing", None, json!({"_meta": meta}));
        assert_eq!(unknown.status, 404);
        let mismatch = send(
            "tools/call",
            Some("other"),
            json!({"name": "search_instances", "_meta": meta}),
        );
        assert_eq!(mismatch.status, 400);
        assert_eq!(
            mismatch.body.unwrap()["error"]["code"],
            envelope::HEADER_MISMATCH
        );
    }

    #[test]
    fn resources_are_read_through_their_routes_and_unknown_ones_are_not_found() {
        let mut backend = fake(true);
        let answer = post(
            &mut backend,
            None,
            request("resources/read", json!({"uri": "kg://actions"})),
        );
        let contents = &answer.body.unwrap()["result"]["contents"][0];
        assert_eq!(contents["uri"], "kg://actions");
        assert_eq!(
            contents["text"],
            json!({"answered": "/actions"}).to_string()
        );
        let answer = post(
            &mut backend,
            None,
            request("resources/read", json!({"uri": "kg://nope"})),
        );
        assert_eq!(answer.body.unwrap()["error"]["code"], RESOURCE_NOT_FOUND);
        let answer = post(&mut backend, None, request("resources/read", json!({})));
        assert_eq!(answer.body.unwrap()["error"]["code"], INVALID_PARAMS);
        let listed = post(
            &mut backend,
            None,
            request("resources/templates/list", json!({})),
        );
        assert!(
            !listed.body.unwrap()["result"]["resourceTemplates"]
                .as_array()
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn prompts_are_listed_and_filled() {
        let listed = post(&mut fake(true), None, request("prompts/list", json!({})));
        assert!(
            listed.body.unwrap()["result"]["prompts"]
                .as_array()
                .unwrap()
                .len()
                >= 4
        );
        let got = post(
            &mut fake(true),
            None,
            request(
                "prompts/get",
                json!({"name": "explain_entity", "arguments": {"entity": "PO-0003"}}),
            ),
        );
        let text = got.body.unwrap()["result"]["messages"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(text.contains("PO-0003"));
        let missing = post(
            &mut fake(true),
            None,
            request("prompts/get", json!({"name": "explain_entity"})),
        );
        assert_eq!(missing.body.unwrap()["error"]["code"], INVALID_PARAMS);
    }

    #[test]
    fn an_execute_with_a_progress_token_is_streamed_and_anything_else_is_answered() {
        let call = |params: Value| {
            handle_post(
                request("tools/call", params).to_string().as_bytes(),
                Head::default(),
                &mut fake(true),
            )
        };
        let args = json!({"entity_type": "PurchaseOrder", "action": "makePayment", "entity_ids": ["PO-1"]});
        match call(
            json!({"name": "action_execute", "arguments": args, "_meta": {"progressToken": "p1"}}),
        ) {
            Handled::Stream {
                id,
                progress_token,
                request,
                ..
            } => {
                assert_eq!((id, progress_token), (json!(7), json!("p1")));
                assert_eq!(request.path, "/actions/PurchaseOrder/makePayment/execute");
            }
            other => panic!("{other:?}"),
        }
        // No token, a token of the wrong kind, bad arguments, or another tool: one piece.
        assert!(
            call(json!({"name": "action_execute", "arguments": args}))
                .answer()
                .is_some()
        );
        assert!(call(json!({"name": "action_execute", "arguments": args, "_meta": {"progressToken": 1.5}})).answer().is_some());
        assert!(
            call(json!({"name": "action_execute", "arguments": {}, "_meta": {"progressToken": 1}}))
                .answer()
                .is_some()
        );
        assert!(
            call(json!({"name": "action_plan", "arguments": args, "_meta": {"progressToken": 1}}))
                .answer()
                .is_some()
        );
    }

    #[test]
    fn a_streamed_call_is_framed_as_sse_messages() {
        let frame =
            String::from_utf8(sse_message(&progress(&json!(3), 1, 2, "PO-1 paid"))).unwrap();
        assert!(frame.starts_with("event: message\ndata: {"), "{frame}");
        assert!(frame.ends_with("}\n\n"));
        let data: Value =
            serde_json::from_str(frame.lines().nth(1).unwrap().trim_start_matches("data: "))
                .unwrap();
        assert_eq!(
            data["params"],
            json!({"progressToken": 3, "progress": 1, "total": 2, "message": "PO-1 paid"})
        );
        let end = call_response(
            &json!(7),
            403,
            json!({"error": {"code": "forbidden"}}),
            false,
        );
        assert_eq!(end["result"]["isError"], true);
    }

    proptest! {
        #[test]
        fn any_message_gets_an_answer_and_never_a_5xx(
            method in prop_oneof![Just("initialize".to_string()), Just("ping".to_string()), Just("tools/list".to_string()), Just("tools/call".to_string()), "[a-z/]{0,12}"],
            params in prop_oneof![Just(json!(null)), Just(json!({})), Just(json!([1])), Just(json!({"name": "action_execute", "arguments": {"entity_ids": 3}})), Just(json!({"name": "search_instances", "arguments": null}))],
            id in prop_oneof![Just(json!(1)), Just(json!("a")), Just(json!(null)), Just(json!(1.5)), Just(json!({}))],
            version in prop_oneof![Just(None), Just(Some("2025-06-18")), Just(Some("x"))],
        ) {
            let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
            let head = Head { protocol_version: version, ..Head::default() };
            let Handled::Answer(answer) = handle_post(body.to_string().as_bytes(), head, &mut fake(false)) else {
                return Ok(());
            };
            prop_assert!(answer.status < 500);
            let body = answer.body.unwrap();
            prop_assert!(body.get("result").is_some() != body.get("error").is_some());
        }
    }
}
