//! A seeded, bounded fuzz run over every route (issue #14): random paths, methods, headers
//! and JSON bodies (wrong types, missing and unknown fields, huge numbers, deep nesting,
//! long strings, random bytes, truncated JSON), authenticated as admin (a few anonymous or
//! with a bad credential).
//!
//! What must hold for every request:
//! - no 5xx. Every dependency is up for the whole run (devgraph with the demo data, and
//!   one stub serving the LLM and the embeddings, answering every call), so a 502/503/504
//!   could only be a client mistake misreported as a dependency failure, or a real fault:
//!   either is a finding, not something to tolerate;
//! - every error (4xx) has a JSON body `{"error": {"code", "message"}}` (HEAD responses
//!   carry no body);
//! - no answer contains a backtrace or an internal Rust type name.
//!
//! Each case that ingests a document gives it its own id: concurrent writes to one entity
//! are the race tests' subject (two fuzz cases writing one document at once meet the
//! graph's write conflict, a 503), and no client mistake.
//!
//! The cases come from a xorshift generator seeded with `KG_FUZZ_SEED` (default below),
//! `KG_FUZZ_REQUESTS` of them (default 10,000: about 10 s on devhost), so a run is
//! reproducible: a failure prints the case's index, method, path and body. Requests run
//! 8 at a time; the graph's state (payments made by earlier cases) can differ between
//! runs, the assertions do not depend on it. The counts by status are printed at the end (`--nocapture`).
//!
//! A second run sends as many fuzzed messages to `/mcp` (issue #37): JSON-RPC requests and
//! notifications of every method, tool calls of every tool, with their ids, params,
//! arguments and `MCP-Protocol-Version` mutated. Its errors may also be JSON-RPC errors
//! (`{"jsonrpc", "id", "error": {"code": <integer>, "message"}}`), the protocol's own shape.

use futures::StreamExt;
use kg_e2e::auth::ADMIN;
use kg_e2e::raw_http::leak;
use kg_e2e::{Stack, answering_stub};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

const DEFAULT_SEED: u64 = 0x6b67_2d61_6765_6e74; // "kg-agent"
const DEFAULT_REQUESTS: usize = 10_000;
const CONCURRENCY: usize = 8;

/// xorshift64*: small, deterministic, good enough to pick cases.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// One generator per case: case `index` is the same whatever ran before it.
    fn for_case(seed: u64, index: usize) -> Rng {
        let mut rng = Rng::new(seed ^ (index as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        for _ in 0..4 {
            rng.next();
        }
        rng
    }
    /// A case's credential ([`Case::admin`]): mostly the admin key, a few anonymous, a few
    /// not a key.
    fn credential(&mut self) -> Option<bool> {
        match self.below(100) {
            0..=2 => None,
            3..=4 => Some(false),
            _ => Some(true),
        }
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    /// True `percent` times in a hundred.
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// The route table (crates/kg-http/src/routes.rs, plus the web component's): method,
/// path with `{placeholders}`, and a well-formed body to mutate.
fn templates() -> Vec<(&'static str, &'static str, Value)> {
    vec![
        ("GET", "/health", Value::Null),
        ("GET", "/health/live", Value::Null),
        ("GET", "/tools", Value::Null),
        ("POST", "/tools/{tool}", Value::Null), // body by tool, see tool_body
        ("GET", "/actions", Value::Null),
        ("GET", "/actions/{type}/{action}", Value::Null),
        (
            "POST",
            "/actions/{type}/{action}/validate",
            json!({"entity_ids": ["PO-0001", "PO-0002"], "parameters": {}}),
        ),
        (
            "POST",
            "/actions/{type}/{action}/plan",
            json!({"entity_ids": ["PO-0003"], "parameters": {}}),
        ),
        (
            "POST",
            "/actions/{type}/{action}/execute",
            json!({"entity_ids": ["PO-0004"], "parameters": {}, "idempotency_key": "fuzz-1",
                   "options": {"chunk_size": 10, "max_concurrent": 2}, "stream": false}),
        ),
        ("GET", "/actions/log", Value::Null),
        ("POST", "/actions/setup", json!({})),
        ("POST", "/actions/log/{log}/undo", json!({})),
        ("GET", "/documents", Value::Null),
        (
            "POST",
            "/documents",
            json!({"id": "fuzz-doc", "title": "Fuzz", "text": "# Orders\n\nApproved orders are paid.",
                   "content_type": "markdown", "metadata": {"team": "qa"},
                   "chunking": {"max_chars": 200, "overlap_chars": 20}}),
        ),
        ("DELETE", "/documents/{doc}", Value::Null),
        (
            "POST",
            "/search",
            json!({"query": "approved orders", "top_k": 3}),
        ),
        (
            "POST",
            "/chat",
            json!({"message": "hello", "routing_mode": "rule", "trace": false}),
        ),
        (
            "POST",
            "/chat/stream",
            json!({"message": "how many suppliers are there", "routing_mode": "hybrid"}),
        ),
        (
            "POST",
            "/chat/approve",
            json!({"approval_token": "apt_0000", "approve": false}),
        ),
        ("POST", "/api/qa/query", json!({"question": "hello"})),
        ("GET", "/conversations/{conv}", Value::Null),
        ("DELETE", "/conversations/{conv}", Value::Null),
        ("GET", "/", Value::Null),
        ("GET", "/assets/{asset}", Value::Null),
    ]
}

const TOOLS: [&str; 9] = [
    "get_node_statistics",
    "search_instances",
    "get_instance_neighbors",
    "describe_class",
    "run_read_cypher",
    "get_ontology",
    "list_labels",
    "find_paths",
    "no_such_tool",
];

fn tool_body(tool: &str) -> Value {
    match tool {
        "get_node_statistics" => json!({"label": "PurchaseOrder", "sample_size": 2}),
        "search_instances" => json!({"search_term": "acme", "limit": 5}),
        "get_instance_neighbors" => json!({"instance": "PRD-036", "hops": 2, "direction": "in"}),
        "describe_class" => json!({"class_name": "Supplier"}),
        "run_read_cypher" => {
            json!({"query": "MATCH (s:Supplier) RETURN s.name LIMIT 3", "limit": 5})
        }
        _ => json!({}),
    }
}

/// A path segment: a plausible value, or something hostile.
fn segment(rng: &mut Rng, plausible: &[&str]) -> String {
    if rng.chance(75) {
        return rng.pick(plausible).to_string();
    }
    let hostile = [
        "",
        "x",
        "%00",
        "%2F",
        "%2e%2e",
        "..",
        "%",
        "%zz",
        "%ff%fe",
        "%C3%BC",
        "%E6%97%A5%E6%9C%AC",
        "%F0%9F%92%A5",
        "a%20b",
        "%22%27%3C",
        "PO-0001",
        "SUP-007",
        "ActionLog",
        "__proto__",
    ];
    if rng.chance(5) {
        return "a".repeat(1 + rng.below(9000));
    }
    rng.pick(&hostile).to_string()
}

/// A path from `template`, sometimes bent (trailing or doubled slash, a dropped or extra
/// segment, upper case, a random query string).
fn path_of(rng: &mut Rng, template: &str, index: usize) -> (String, String) {
    let tool = segment(rng, &TOOLS);
    let mut path = template
        .replace("{tool}", &tool)
        .replace(
            "{type}",
            &segment(rng, &["PurchaseOrder", "Supplier", "Invoice"]),
        )
        .replace(
            "{action}",
            &segment(
                rng,
                &[
                    "approve",
                    "makePayment",
                    "cancel",
                    "reopen",
                    "blockSupplier",
                    "unblockSupplier",
                ],
            ),
        )
        .replace("{log}", &segment(rng, &["alog-0", "nope"]))
        .replace(
            "{doc}",
            &segment(rng, &[format!("fuzz-doc-{index}").as_str(), "missing"]),
        )
        .replace("{conv}", &segment(rng, &["c-fuzz", "conv-1"]))
        .replace("{asset}", &segment(rng, &["index.js", "app.css", "x.map"]));
    match rng.below(20) {
        0 => path.push('/'),
        1 => path = path.replacen('/', "//", 1),
        2 => {
            path = path
                .rsplit_once('/')
                .map_or(path.clone(), |(p, _)| p.to_string())
        }
        3 => path.push_str(&format!("/{}", segment(rng, &["extra"]))),
        4 => path = path.to_uppercase(),
        _ => {}
    }
    if path.is_empty() || !path.starts_with('/') {
        path.insert(0, '/');
    }
    if rng.chance(25) {
        let queries = [
            "limit=abc",
            "limit=-1",
            "limit=0",
            "limit=99999999999999999999999",
            "limit=5&cursor=garbage",
            "cursor=%ff%fe",
            "entity_type=Supplier",
            "entity_type=",
            "a=1&a=2&a=3",
            "%zz=%zz",
        ];
        path.push('?');
        path.push_str(rng.pick(&queries));
    }
    (path, tool)
}

/// A value of the wrong kind, or an extreme one.
fn weird(rng: &mut Rng) -> Value {
    match rng.below(16) {
        0 => Value::Null,
        1 => json!(true),
        2 => json!(-1),
        3 => json!(0),
        4 => json!(1.5e308),
        5 => json!(u64::MAX),
        6 => json!(i64::MIN),
        7 => json!(""),
        8 => json!("x".repeat(20_000)),
        9 => json!("\u{0}\u{1f}\u{202e}𝕏"),
        10 => json!([]),
        11 => json!({}),
        12 => json!((0..1000).collect::<Vec<_>>()),
        13 => deep_value(20 + rng.below(40)),
        14 => json!({"$ne": null, "__proto__": {"x": 1}}),
        _ => json!("MATCH (n) DETACH DELETE n"),
    }
}

fn deep_value(levels: usize) -> Value {
    let mut v = json!(1);
    for i in 0..levels {
        v = if i % 2 == 0 {
            json!([v])
        } else {
            json!({"k": v})
        };
    }
    v
}

/// Applies a few mutations to an object body: drop a field, add an unknown one, replace
/// a field (or a value inside it) with a weird value.
fn mutate(rng: &mut Rng, mut body: Value) -> Value {
    let Value::Object(map) = &mut body else {
        return body;
    };
    for _ in 0..rng.below(4) {
        let keys: Vec<String> = map.keys().cloned().collect();
        match rng.below(4) {
            0 if !keys.is_empty() => {
                map.remove(rng.pick(&keys));
            }
            1 => {
                map.insert(format!("unknown_{}", rng.below(5)), weird(rng));
            }
            _ if !keys.is_empty() => {
                let key = rng.pick(&keys).clone();
                let value = weird(rng);
                match map.get_mut(&key) {
                    Some(Value::Array(items)) if !items.is_empty() && rng.chance(50) => {
                        let at = rng.below(items.len());
                        items[at] = value;
                    }
                    Some(Value::Object(inner)) if rng.chance(50) => {
                        inner.insert("k".into(), value);
                    }
                    _ => {
                        map.insert(key, value);
                    }
                }
            }
            _ => {}
        }
    }
    body
}

/// The body's bytes: usually the mutated template, sometimes something that is not a
/// JSON object at all.
fn body_of(rng: &mut Rng, base: &Value) -> Vec<u8> {
    let base = if base.is_null() && rng.chance(70) {
        return Vec::new();
    } else if base.is_null() {
        json!({})
    } else {
        base.clone()
    };
    let text = mutate(rng, base).to_string();
    match rng.below(25) {
        0 => (0..rng.below(200)).map(|_| rng.next() as u8).collect(),
        1 => rng
            .pick(&["[]", "42", "\"s\"", "null", "true", "{", "}", "{\"a\":}"])
            .as_bytes()
            .to_vec(),
        2 => {
            let cut = rng.below(text.len().max(1));
            text.as_bytes()[..cut].to_vec()
        }
        3 => {
            let levels = 33 + rng.below(200);
            format!("{{\"a\":{}1{}}}", "[".repeat(levels), "]".repeat(levels)).into_bytes()
        }
        4 => {
            let mut bytes = text.into_bytes();
            if let Some(at) = bytes.iter().position(|b| *b == b'"') {
                bytes.splice(at + 1..at + 1, [0xff, 0xfe, 0xc3]);
            }
            bytes
        }
        5 => text
            .replacen(|c: char| c.is_ascii_digit(), "1e999", 1)
            .into_bytes(),
        6 => text
            .replacen(|c: char| c.is_ascii_digit(), "184467440737095516160000", 1)
            .into_bytes(),
        7 => format!("{text}{text}").into_bytes(),
        _ => text.into_bytes(),
    }
}

struct Case {
    index: usize,
    template: &'static str,
    method: String,
    path: String,
    headers: Vec<(&'static str, String)>,
    body: Vec<u8>,
    /// `None`: anonymous; `Some(false)`: a credential that is not a key.
    admin: Option<bool>,
}

fn case(seed: u64, index: usize, templates: &[(&'static str, &'static str, Value)]) -> Case {
    let mut rng = Rng::for_case(seed, index);
    let (right_method, template, base) = rng.pick(templates).clone();
    let method = if rng.chance(85) {
        right_method.to_string()
    } else {
        rng.pick(&[
            "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "FUZZ",
        ])
        .to_string()
    };
    let (path, tool) = path_of(&mut rng, template, index);
    let mut base = if template == "/tools/{tool}" {
        tool_body(&tool)
    } else {
        base
    };
    // Each case ingests its own document (see the module comment).
    if base.get("id").is_some_and(|id| id == "fuzz-doc") {
        base["id"] = json!(format!("fuzz-doc-{index}"));
    }
    let body = body_of(&mut rng, &base);
    let mut headers: Vec<(&'static str, String)> = Vec::new();
    if rng.chance(90) {
        let types = [
            "application/json",
            "application/json; charset=utf-8",
            "text/plain",
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
            "garbage",
        ];
        headers.push(("content-type", rng.pick(&types).to_string()));
    }
    if rng.chance(20) {
        headers.push((
            "accept",
            rng.pick(&["text/event-stream", "application/json", "*/*", "x/y"])
                .to_string(),
        ));
    }
    if rng.chance(15) {
        let key = if rng.chance(20) {
            "k".repeat(2000)
        } else {
            format!("fuzz-{}", rng.below(50))
        };
        headers.push(("idempotency-key", key));
    }
    if rng.chance(5) {
        headers.push(("last-event-id", format!("{}", rng.next())));
    }
    if rng.chance(5) {
        headers.push(("origin", "http://evil.example".into()));
    }
    if rng.chance(5) {
        headers.push(("traceparent", "00-zz-zz-01".into()));
    }
    if rng.chance(3) {
        headers.push(("content-encoding", "gzip".into()));
    }
    let admin = rng.credential();
    Case {
        index,
        template,
        method,
        path,
        headers,
        body,
        admin,
    }
}

struct Outcome {
    status: u16,
    problem: Option<String>,
}

async fn run(client: &reqwest::Client, base: &str, case: &Case) -> Outcome {
    let method = reqwest::Method::from_bytes(case.method.as_bytes()).unwrap();
    let mut request = client.request(method.clone(), format!("{base}{}", case.path));
    match case.admin {
        Some(true) => request = request.bearer_auth(ADMIN),
        Some(false) => request = request.bearer_auth("kga_not_a_key"),
        None => {}
    }
    for (name, value) in &case.headers {
        request = request.header(*name, value.as_str());
    }
    if !case.body.is_empty() {
        request = request.body(case.body.clone());
    }
    let response = match request.send().await {
        Ok(response) => response,
        Err(e) => {
            return Outcome {
                status: 0,
                problem: Some(format!("no answer: {e:?}")),
            };
        }
    };
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let bytes = match response.bytes().await {
        Ok(bytes) => bytes,
        Err(e) => {
            return Outcome {
                status,
                problem: Some(format!("body not read: {e}")),
            };
        }
    };
    let text = String::from_utf8_lossy(&bytes);
    let cut = |t: &str| t.chars().take(300).collect::<String>();
    let problem = if status >= 500 {
        Some(format!("{status}: {}", cut(&text)))
    } else if let Some(marker) = leak(&text) {
        Some(format!("leaks `{marker}`: {}", cut(&text)))
    } else if status >= 400 && method != reqwest::Method::HEAD {
        let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        let error = &body["error"];
        let json_rpc =
            case.template == "/mcp" && body["jsonrpc"] == "2.0" && error["code"].is_i64();
        (!((error["code"].is_string() || json_rpc) && error["message"].is_string())).then(|| {
            format!(
                "{status} without a JSON error ({content_type}): {}",
                cut(&text)
            )
        })
    } else if content_type.starts_with("application/json")
        && method != reqwest::Method::HEAD
        && serde_json::from_slice::<Value>(&bytes).is_err()
    {
        Some(format!("{status} says JSON but is not: {}", cut(&text)))
    } else {
        None
    };
    Outcome { status, problem }
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| {
            let v = v.trim();
            match v.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16).ok(),
                None => v.parse().ok(),
            }
        })
        .unwrap_or(default)
}

/// What the `/mcp` cases start from before mutation: every method, every tool.
fn mcp_templates() -> Vec<Value> {
    let call = |name: &str, arguments: Value| json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}});
    let order =
        json!({"entity_type": "PurchaseOrder", "action": "makePayment", "entity_ids": ["PO-0005"]});
    let mut templates = vec![
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": "p", "method": "ping"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"cursor": "x"}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "resources/list"}),
        json!({"jsonrpc": "2.0", "id": 4, "result": {}}),
        call("action_list", json!({"entity_type": "PurchaseOrder"})),
        call(
            "action_describe",
            json!({"entity_type": "PurchaseOrder", "action": "cancel"}),
        ),
        call("action_validate", order.clone()),
        call("action_plan", order.clone()),
        call("action_execute", order.clone()),
        call("action_undo", json!({"log_id": "LOG-1"})),
        call("action_log", json!({"limit": 3})),
        call("search_documents", json!({"query": "orders", "top_k": 2})),
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
            "name": "action_execute", "arguments": order, "_meta": {"progressToken": "fuzz"}}}),
    ];
    templates.extend(TOOLS.iter().map(|tool| call(tool, tool_body(tool))));
    // The 2026-07-28 envelope: the same requests with the per-request `_meta`.
    let envelope = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "fuzz", "version": "1"},
    });
    let modern: Vec<Value> = templates
        .iter()
        .filter(|t| t.get("id").is_some() && t["method"] != "initialize")
        .map(|t| {
            let mut t = t.clone();
            t["params"]["_meta"] = envelope.clone();
            t
        })
        .chain([json!({"jsonrpc": "2.0", "id": 9, "method": "server/discover", "params": {"_meta": envelope}})])
        .collect();
    templates.extend(modern);
    templates
}

fn mcp_case(seed: u64, index: usize) -> Case {
    let mut rng = Rng::for_case(seed, index);
    let templates = mcp_templates();
    let base = rng.pick(&templates).clone();
    let body = body_of(&mut rng, &base);
    let method = if rng.chance(95) {
        "POST".to_string()
    } else {
        rng.pick(&["GET", "DELETE", "PUT", "HEAD", "OPTIONS"])
            .to_string()
    };
    let mut headers: Vec<(&'static str, String)> =
        vec![("content-type", "application/json".into())];
    if rng.chance(70) {
        let versions = [
            "2025-11-25",
            "2025-06-18",
            "2025-03-26",
            "2026-07-28",
            "",
            "1999-01-01",
            "2025-11-25, 2025-06-18",
        ];
        headers.push(("mcp-protocol-version", rng.pick(&versions).to_string()));
    }
    if rng.chance(80) {
        let accepts = [
            "application/json, text/event-stream",
            "application/json",
            "text/event-stream",
            "*/*",
            "x/y",
        ];
        headers.push(("accept", rng.pick(&accepts).to_string()));
    }
    if rng.chance(50) {
        // The envelope's routing headers, right (from the body) or not.
        let method = base["method"].as_str().unwrap_or("tools/call");
        let method = if rng.chance(85) { method } else { "tools/list" };
        headers.push(("mcp-method", method.to_string()));
        let name = base["params"]["name"]
            .as_str()
            .or(base["params"]["uri"].as_str());
        if let Some(name) = name {
            let name = if rng.chance(85) { name } else { "other" };
            headers.push(("mcp-name", name.to_string()));
        }
    }
    if rng.chance(5) {
        headers.push(("mcp-session-id", format!("{}", rng.next())));
    }
    if rng.chance(5) {
        headers.push(("origin", "http://evil.example".into()));
    }
    let admin = rng.credential();
    Case {
        index,
        template: "/mcp",
        method,
        path: "/mcp".into(),
        headers,
        body,
        admin,
    }
}

#[tokio::test]
async fn fuzzed_requests_on_every_route_never_get_a_5xx_and_every_error_is_json() {
    let templates = templates();
    fuzz(&|seed, i| case(seed, i, &templates)).await;
}

#[tokio::test]
async fn fuzzed_mcp_messages_never_get_a_5xx_and_every_error_is_json() {
    fuzz(&mcp_case).await;
}

/// Runs the cases `make` gives, against a fresh app, and checks every answer.
async fn fuzz(make: &dyn Fn(u64, usize) -> Case) {
    let seed = env_number("KG_FUZZ_SEED", DEFAULT_SEED);
    let requests = env_number("KG_FUZZ_REQUESTS", DEFAULT_REQUESTS as u64) as usize;

    // One stub for the LLM and the embeddings, so every dependency answers.
    let stub = answering_stub::start().await;
    let stack = Stack::start_with(&answering_stub::variables(&stub))
        .await
        .unwrap();
    let host = &stack.host;

    let cases: Vec<Case> = (0..requests).map(|i| make(seed, i)).collect();
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let started = Instant::now();
    let outcomes: Vec<(usize, Outcome)> = futures::stream::iter(cases.iter())
        .map(|c| {
            let client = &client;
            let url = host.url.as_str();
            async move { (c.index, run(client, url, c).await) }
        })
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await;
    let elapsed = started.elapsed();

    let mut by_status: BTreeMap<u16, usize> = BTreeMap::new();
    let mut by_route: BTreeMap<&str, BTreeMap<u16, usize>> = BTreeMap::new();
    let mut problems = Vec::new();
    for (index, outcome) in &outcomes {
        let c = &cases[*index];
        *by_status.entry(outcome.status).or_default() += 1;
        *by_route
            .entry(c.template)
            .or_default()
            .entry(outcome.status)
            .or_default() += 1;
        if let Some(problem) = &outcome.problem {
            let body: String = String::from_utf8_lossy(&c.body).chars().take(200).collect();
            problems.push(format!(
                "case {index}: {} {} (admin {:?}) body {body:?}\n  -> {problem}",
                c.method,
                c.path.chars().take(120).collect::<String>(),
                c.admin
            ));
        }
    }
    println!(
        "fuzz: seed {seed:#x}, {} requests in {:.1} s, {CONCURRENCY} at a time",
        outcomes.len(),
        elapsed.as_secs_f64()
    );
    println!("fuzz: counts by status: {by_status:?}");
    for (route, counts) in &by_route {
        println!("fuzz:   {route:<36} {counts:?}");
    }
    assert_eq!(outcomes.len(), requests);
    assert!(
        problems.is_empty(),
        "{} of {requests} requests broke a rule (seed {seed:#x}):\n{}",
        problems.len(),
        problems
            .iter()
            .take(25)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
