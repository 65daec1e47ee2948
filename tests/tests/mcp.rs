//! `/mcp` driven by a client nobody here wrote: the official MCP Python SDK (`mcp` from
//! PyPI, tests/mcp/). It negotiates, lists the tools, reads the graph, checks, runs and
//! undoes an action; a viewer's credential sees only read tools and cannot execute; and
//! malformed protocol input gets JSON-RPC errors, never a 5xx.

use kg_e2e::auth::{ADMIN, APPROVER, OPERATOR, VIEWER};
use kg_e2e::cut_proxy::CutProxy;
use kg_e2e::{AppHost, Graph, Stack, app_manifest, mcp};
use serde_json::{Value, json};
use std::time::Duration;

fn tool_names(listed: &Value) -> Vec<String> {
    listed["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools in {listed}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

/// Panics unless `structured` conforms to the `outputSchema` the tool list gave `tool`.
fn conforms(listed: &Value, tool: &str, structured: &Value) {
    let schema = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == tool)
        .map(|t| t["outputSchema"].clone())
        .unwrap_or_else(|| panic!("{tool} has no outputSchema"));
    let validator = jsonschema::validator_for(&schema).unwrap();
    let problems: Vec<String> = validator
        .iter_errors(structured)
        .map(|e| e.to_string())
        .collect();
    assert!(problems.is_empty(), "{tool}: {problems:?}\n{structured}");
}

async fn order_status(stack: &Stack, id: &str) -> String {
    let rows = stack
        .graph
        .query(&format!(
            "MATCH (o:PurchaseOrder {{id: '{id}'}}) RETURN o.status"
        ))
        .await
        .unwrap();
    rows[0][0].as_str().unwrap().to_string()
}

#[tokio::test]
async fn an_official_sdk_client_reads_the_graph_and_runs_and_undoes_an_action() {
    let stack = Stack::start().await.unwrap();
    let approved: Vec<String> = stack
        .graph
        .query("MATCH (o:PurchaseOrder {status: 'approved'}) RETURN o.id ORDER BY o.id")
        .await
        .unwrap()
        .iter()
        .map(|r| r[0].as_str().unwrap().to_string())
        .collect();
    let first = mcp::session(
        &stack.host,
        ADMIN,
        &json!([
            {"op": "list_tools"},
            {"op": "call", "name": "get_node_statistics", "arguments": {}},
            {"op": "call", "name": "action_validate", "arguments": {
                "entity_type": "PurchaseOrder", "action": "makePayment", "entity_ids": approved}},
            {"op": "call", "name": "action_execute", "arguments": {
                "entity_type": "PurchaseOrder", "action": "makePayment", "entity_ids": ["PO-9999"], "stream": true}},
            {"op": "call", "name": "drop_everything", "arguments": {}},
            {"op": "ping"},
        ]),
    )
    .await
    .unwrap();
    // The SDK discovers the server (`server/discover`) and speaks 2026-07-28 with it.
    assert_eq!(first["protocol_version"], "2026-07-28", "{first}");
    assert_eq!(first["server_name"], "kg-agent");
    let results = first["results"].as_array().unwrap();
    let names = tool_names(&results[0]);
    for expected in [
        "get_node_statistics",
        "search_instances",
        "run_read_cypher",
        "action_list",
        "action_plan",
        "action_execute",
        "action_undo",
        "search_documents",
    ] {
        assert!(
            names.contains(&expected.to_string()),
            "{expected} in {names:?}"
        );
    }
    let stats = &results[1];
    assert_eq!(stats["isError"], false, "{stats}");
    assert_eq!(stats["structured"]["tool"], "get_node_statistics");
    assert!(stats["structured"]["data"]["total_nodes"].as_i64().unwrap() > 0);
    let validation = &results[2]["structured"];
    assert_eq!(validation["total"], approved.len(), "{validation}");
    let payable = validation["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["can_execute"] == true)
        .and_then(|r| r["entity_id"].as_str())
        .unwrap_or_else(|| panic!("no payable order in {validation}"))
        .to_string();
    // `stream` is refused before any route runs: progress is MCP's, not SSE's.
    assert_eq!(results[3]["isError"], true, "{}", results[3]);
    assert!(results[3]["text"][0].as_str().unwrap().contains("stream"));
    // An unknown tool is a protocol error (invalid params), not a tool result.
    assert_eq!(results[4]["error"]["code"], -32602, "{}", results[4]);
    assert_eq!(results[5]["pong"], true);
    conforms(&results[0], "get_node_statistics", &stats["structured"]);
    conforms(&results[0], "action_validate", validation);

    let key = format!("mcp-e2e-{payable}");
    let execute = json!({"op": "call", "name": "action_execute", "arguments": {
        "entity_type": "PurchaseOrder", "action": "makePayment",
        "entity_ids": [payable], "idempotency_key": key}});
    let second = mcp::session(&stack.host, ADMIN, &json!([execute, execute]))
        .await
        .unwrap();
    let paid = &second["results"][0]["structured"];
    assert_eq!(paid["succeeded"], 1, "{paid}");
    assert_eq!(order_status(&stack, &payable).await, "paid");
    // The same key again replays the outcome: paid once.
    let replay = &second["results"][1]["structured"];
    assert_eq!(replay["successes"][0]["replayed"], true, "{replay}");
    conforms(&results[0], "action_execute", paid);
    conforms(&results[0], "action_execute", replay);
    let log_id = paid["successes"][0]["log_id"].as_str().unwrap().to_string();

    let third = mcp::session(
        &stack.host,
        ADMIN,
        &json!([
            {"op": "call", "name": "action_undo", "arguments": {"log_id": log_id}},
            {"op": "call", "name": "action_log", "arguments": {"limit": 5}},
        ]),
    )
    .await
    .unwrap();
    let undone = &third["results"][0];
    assert_eq!(undone["isError"], false, "{undone}");
    assert_eq!(order_status(&stack, &payable).await, "approved");
    conforms(&results[0], "action_undo", &undone["structured"]);
    let log = &third["results"][1]["structured"];
    conforms(&results[0], "action_log", log);
    let entries = log["entries"].as_array().unwrap_or_else(|| panic!("{log}"));
    // The log's actor is the credential's subject.
    assert!(entries.iter().any(|e| e["actor"] == "admin"), "{log}");
}

/// A client of the handshake era gets 2025-11-25 (the SDK's newest handshake), or the
/// older revision it asks for, and the same tools.
#[tokio::test]
async fn handshake_clients_are_served_the_revision_they_speak() {
    let stack = Stack::start().await.unwrap();
    let steps = json!([
        {"op": "call", "name": "get_node_statistics", "arguments": {"label": "Supplier", "sample_size": 0}},
        {"op": "read_resource", "uri": "kg://actions"},
    ]);
    let legacy = mcp::session_in(&stack.host, ADMIN, &steps, "legacy")
        .await
        .unwrap();
    assert_eq!(legacy["protocol_version"], "2025-11-25", "{legacy}");
    assert_eq!(legacy["server_name"], "kg-agent");
    let stats = &legacy["results"][0]["structured"];
    assert_eq!(stats["data"]["labels"][0]["count"], 10, "{stats}");
    assert!(legacy["results"][1]["contents"][0]["text"].is_string());
    for older in ["2025-06-18", "2025-03-26"] {
        let (status, _, answer) = raw(
            &stack,
            Some(ADMIN),
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": older, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
            .to_string(),
            &[],
        )
        .await;
        assert_eq!(status, 200);
        assert_eq!(answer["result"]["protocolVersion"], older, "{answer}");
        let (status, _, answer) = raw(
            &stack,
            Some(ADMIN),
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            &[("mcp-protocol-version", older)],
        )
        .await;
        assert_eq!(status, 200, "{answer}");
        assert!(answer["result"]["tools"].as_array().unwrap().len() > 10);
        assert!(
            answer["result"].get("resultType").is_none(),
            "{older} results have no resultType"
        );
    }
}

#[tokio::test]
async fn a_viewer_sees_only_read_tools_and_cannot_execute() {
    let stack = Stack::start().await.unwrap();
    let order = stack
        .graph
        .query("MATCH (o:PurchaseOrder {status: 'approved'}) RETURN o.id ORDER BY o.id LIMIT 1")
        .await
        .unwrap()[0][0]
        .as_str()
        .unwrap()
        .to_string();
    let report = mcp::session(
        &stack.host,
        VIEWER,
        &json!([
            {"op": "list_tools"},
            {"op": "call", "name": "action_execute", "arguments": {
                "entity_type": "PurchaseOrder", "action": "makePayment", "entity_ids": [order]}},
            {"op": "call", "name": "get_node_statistics", "arguments": {}},
        ]),
    )
    .await
    .unwrap();
    let results = report["results"].as_array().unwrap();
    let names = tool_names(&results[0]);
    for hidden in [
        "action_validate",
        "action_plan",
        "action_execute",
        "action_undo",
    ] {
        assert!(
            !names.contains(&hidden.to_string()),
            "{hidden} in {names:?}"
        );
    }
    assert!(
        names.contains(&"get_node_statistics".to_string()),
        "{names:?}"
    );
    // Called anyway, it is refused exactly as POST /actions/…/execute refuses a viewer.
    let refused = &results[1];
    assert_eq!(refused["isError"], true, "{refused}");
    let error: Value = serde_json::from_str(refused["text"][0].as_str().unwrap()).unwrap();
    assert_eq!(error["error"]["code"], "forbidden", "{error}");
    let (status, http) = stack
        .host
        .send_as(
            Some(VIEWER),
            "POST",
            "/actions/PurchaseOrder/makePayment/execute",
            &json!({"entity_ids": [order]}).to_string(),
        )
        .await
        .unwrap();
    assert_eq!(status, 403);
    assert_eq!(http["error"]["message"], error["error"]["message"]);
    assert_eq!(order_status(&stack, &order).await, "approved");
    assert_eq!(results[2]["isError"], false);
}

#[tokio::test]
async fn resources_and_prompts_are_served_to_the_sdk_and_follow_permissions() {
    let stack = Stack::start().await.unwrap();
    let steps = json!([
        {"op": "list_resources"},
        {"op": "list_resource_templates"},
        {"op": "read_resource", "uri": "kg://ontology/classes"},
        {"op": "read_resource", "uri": "kg://instances/PO-0003"},
        {"op": "read_resource", "uri": "kg://actions/PurchaseOrder/makePayment"},
        {"op": "read_resource", "uri": "kg://nowhere"},
        {"op": "list_prompts"},
        {"op": "get_prompt", "name": "pay_open_orders", "arguments": {"supplier": "ACME"}},
    ]);
    let admin = mcp::session(&stack.host, ADMIN, &steps).await.unwrap();
    let r = admin["results"].as_array().unwrap();
    let uris: Vec<&str> = r[0]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        uris,
        [
            "kg://ontology/classes",
            "kg://ontology/relationships",
            "kg://actions",
            "kg://actions/log",
            "kg://documents"
        ]
    );
    assert_eq!(r[1]["templates"].as_array().unwrap().len(), 3, "{}", r[1]);
    let text = |i: usize| -> Value {
        let text = r[i]["contents"][0]["text"].as_str();
        serde_json::from_str(text.unwrap_or_else(|| panic!("{}", r[i]))).unwrap()
    };
    assert_eq!(text(2)["tool"], "get_ontology_classes", "{}", text(2));
    assert_eq!(text(3)["tool"], "get_instance_neighbors");
    assert!(
        text(3)["graph_data"]["nodes"].as_array().unwrap().len() > 1,
        "{}",
        text(3)
    );
    assert_eq!(text(4)["name"], "makePayment", "{}", text(4));
    assert_eq!(r[5]["error"]["code"], -32002, "{}", r[5]);
    assert!(r[6]["prompts"].as_array().unwrap().len() >= 4);
    let prompt = r[7]["messages"][0]["content"]["text"].as_str().unwrap();
    assert!(
        prompt.contains("ACME") && prompt.contains("action_plan"),
        "{prompt}"
    );

    // A viewer (no `actions:log`) is not offered the action log, and cannot read it.
    let viewer = mcp::session(
        &stack.host,
        VIEWER,
        &json!([{"op": "list_resources"}, {"op": "read_resource", "uri": "kg://actions/log"}]),
    )
    .await
    .unwrap();
    let listed = viewer["results"][0]["resources"].to_string();
    assert!(!listed.contains("kg://actions/log"), "{listed}");
    assert!(
        viewer["results"][1]["error"]["code"].is_i64(),
        "{}",
        viewer["results"][1]
    );
}

#[tokio::test]
async fn the_protected_resource_metadata_names_the_configured_issuer() {
    let stack = Stack::start_with(&[
        ("auth_mode", "api_key,oidc".to_string()),
        ("oidc_issuer", "https://id.example/realms/kg/".to_string()),
        ("oidc_client_id", "kg-web".to_string()),
        ("public_url", "https://kg.example/".to_string()),
    ])
    .await
    .unwrap();
    let (status, metadata) = stack
        .host
        .send_as(None, "GET", "/.well-known/oauth-protected-resource/mcp", "")
        .await
        .unwrap();
    assert_eq!(status, 200, "{metadata}");
    assert_eq!(metadata["resource"], "https://kg.example/mcp");
    assert_eq!(
        metadata["authorization_servers"],
        json!(["https://id.example/realms/kg"])
    );
    assert!(
        metadata["scopes_supported"]
            .as_array()
            .unwrap()
            .contains(&json!("openid"))
    );
}

/// The issue's whole path with the SDK: plan a 1,000-order payment (an operator's batch
/// limit holds; an admin's plan needs approval), an approver redeems the token with
/// progress notifications for every order, the token is spent, and one payment is undone.
#[tokio::test]
async fn a_thousand_payments_are_planned_approved_and_run_with_progress_then_one_is_undone() {
    const ORDERS: usize = 1_000;
    let stack = Stack::start().await.unwrap();
    let (status, r) = stack
        .host
        .send("POST", "/actions/setup", "{}")
        .await
        .unwrap();
    assert_eq!(status, 200, "{r}");
    stack
        .graph
        .write("MATCH (a:Account {id: 'ACC-MAIN'}) SET a.balance = 1000000000.0")
        .await
        .unwrap();
    let ids = stack
        .graph
        .create_approved_orders("PO-MCP", ORDERS, 10.0)
        .await
        .unwrap();
    let plan = json!({"op": "call", "name": "action_plan", "arguments": {
        "entity_type": "PurchaseOrder", "action": "makePayment", "entity_ids": ids,
        "parameters": {"reference": "MCP-1"}}});

    let operator = mcp::session(&stack.host, OPERATOR, &json!([plan]))
        .await
        .unwrap();
    let refused = &operator["results"][0];
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(
        refused["text"][0].as_str().unwrap().contains("100"),
        "{refused}"
    );

    let admin = mcp::session(&stack.host, ADMIN, &json!([plan]))
        .await
        .unwrap();
    let planned = &admin["results"][0]["structured"];
    assert_eq!(planned["approval_required"], true, "{planned}");
    let token = planned["approval_token"].as_str().unwrap().to_string();
    // Nothing runs on a plan.
    assert_eq!(order_status(&stack, &ids[0]).await, "approved");

    let execute = json!({"op": "call", "name": "action_execute", "progress": true, "arguments": {
        "entity_type": "PurchaseOrder", "action": "makePayment", "entity_ids": ids,
        "parameters": {"reference": "MCP-1"}, "approval_token": token,
        "options": {"chunk_size": 50, "max_concurrent": 4}}});
    let approver = mcp::session(&stack.host, APPROVER, &json!([execute, execute]))
        .await
        .unwrap();
    let ran = &approver["results"][0];
    assert_eq!(ran["isError"], false, "{}", ran["text"]);
    assert_eq!(
        ran["structured"]["succeeded"], ORDERS,
        "{}",
        ran["structured"]
    );
    let progress = &ran["progress"];
    assert_eq!(progress["count"], ORDERS, "{progress}");
    assert_eq!(progress["total"], ORDERS as f64);
    let values: Vec<f64> = progress["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert!(
        values.windows(2).all(|w| w[0] < w[1]),
        "progress only grows"
    );
    assert_eq!(values.last(), Some(&(ORDERS as f64)));
    assert!(
        progress["first_message"]
            .as_str()
            .unwrap()
            .starts_with("PO-MCP"),
        "{progress}"
    );
    let paid = stack
        .graph
        .query("MATCH (o:PurchaseOrder {status: 'paid'}) WHERE o.id STARTS WITH 'PO-MCP' RETURN count(o)")
        .await
        .unwrap();
    assert_eq!(paid[0][0], ORDERS);
    // The approval was single use.
    let again = &approver["results"][1];
    assert_eq!(again["isError"], true, "{again}");

    let log_id = ran["structured"]["successes"][0]["log_id"]
        .as_str()
        .unwrap()
        .to_string();
    let undone_id = ran["structured"]["successes"][0]["entity_id"]
        .as_str()
        .unwrap()
        .to_string();
    let undo = mcp::session(
        &stack.host,
        ADMIN,
        &json!([{"op": "call", "name": "action_undo", "arguments": {"log_id": log_id}}]),
    )
    .await
    .unwrap();
    assert_eq!(undo["results"][0]["isError"], false, "{undo}");
    assert_eq!(order_status(&stack, &undone_id).await, "approved");
}

/// A raw POST to /mcp: status, headers and body as JSON (or Null).
async fn raw(
    stack: &Stack,
    key: Option<&str>,
    body: &str,
    headers: &[(&str, &str)],
) -> (u16, reqwest::header::HeaderMap, Value) {
    let mut request = reqwest::Client::new()
        .post(format!("{}/mcp", stack.host.url))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string());
    if let Some(key) = key {
        request = request.bearer_auth(key);
    }
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.unwrap();
    (
        status,
        headers,
        serde_json::from_str(&text).unwrap_or(Value::Null),
    )
}

#[tokio::test]
async fn bad_protocol_input_gets_json_rpc_errors_and_never_a_5xx() {
    let stack = Stack::start().await.unwrap();
    let admin = Some(ADMIN);
    let cases: &[(&str, u16, i64)] = &[
        ("{not json", 400, -32700),
        ("", 400, -32700),
        (r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#, 400, -32600),
        (r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, 400, -32600),
        (r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#, 200, -32600),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"resources/subscribe"}"#,
            200,
            -32601,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}"#,
            200,
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[]}"#,
            200,
            -32602,
        ),
    ];
    for (body, status, code) in cases {
        let (got, _, answer) = raw(&stack, admin, body, &[]).await;
        assert_eq!(
            (got, answer["error"]["code"].as_i64()),
            (*status, Some(*code)),
            "{body}: {answer}"
        );
        assert_eq!(answer["jsonrpc"], "2.0");
    }
    // A revision the server does not speak is a 400 naming the ones it does.
    let (status, _, answer) = raw(
        &stack,
        admin,
        r#"{"jsonrpc":"2.0","id":"v","method":"tools/list"}"#,
        &[("mcp-protocol-version", "1999-01-01")],
    )
    .await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(answer["id"], "v");
    assert!(
        answer["error"]["data"]["supported"]
            .as_array()
            .unwrap()
            .contains(&json!("2025-06-18"))
    );
    // A notification is accepted with no body.
    let (status, _, answer) = raw(
        &stack,
        admin,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        &[("mcp-protocol-version", "2025-06-18")],
    )
    .await;
    assert_eq!((status, answer), (202, Value::Null));
    // No credential: 401 with the challenge, before any byte of MCP is read.
    let (status, headers, _) = raw(
        &stack,
        None,
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        &[],
    )
    .await;
    assert_eq!(status, 401);
    // MCP authorization: the challenge points at the RFC 9728 metadata, public.
    let challenge = headers["www-authenticate"].to_str().unwrap().to_string();
    let metadata_url = format!(
        "{}/.well-known/oauth-protected-resource/mcp",
        stack.host.url
    );
    assert!(
        challenge.starts_with("Bearer ")
            && challenge.contains(&format!("resource_metadata=\"{metadata_url}\"")),
        "{challenge}"
    );
    let metadata: Value = reqwest::get(&metadata_url)
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(metadata["resource"], format!("{}/mcp", stack.host.url));
    assert_eq!(metadata["bearer_methods_supported"], json!(["header"]));
    // API keys only: no authorization server to name.
    assert!(
        metadata.get("authorization_servers").is_none(),
        "{metadata}"
    );
    // Stateless: no server stream to GET, no session to DELETE.
    for method in ["GET", "DELETE"] {
        let (status, _) = stack.host.send(method, "/mcp", "").await.unwrap();
        assert_eq!(status, 405, "{method}");
    }
}

/// A client that leaves a streamed batch stops it, as on `POST /actions/…/execute` with
/// SSE: the chunks running finish, none starts after. The graph sits behind a paced link
/// (each statement held 150 ms, one at a time), so 1,000 payments in chunks of 25 take
/// about 6 s; the client reads the first progress notification and hangs up.
#[tokio::test]
async fn a_client_that_leaves_a_streamed_batch_stops_it() {
    const ORDERS: usize = 1_000;
    let graph = Graph::start().await.unwrap();
    graph
        .write("MATCH (a:Account {id: 'ACC-MAIN'}) SET a.balance = 1000000000.0")
        .await
        .unwrap();
    let ids = graph
        .create_approved_orders("PO-LEAVE", ORDERS, 10.0)
        .await
        .unwrap();
    let link = CutProxy::start(&graph.url).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut variables = graph.variables();
    variables[0].1 = link.url.clone();
    variables.push(("approval_batch_threshold", "1000000".to_string()));
    let host = AppHost::start(&app_manifest(), &dir.path().join("kv.db"), &variables)
        .await
        .unwrap();
    link.pace(Some(Duration::from_millis(150)));
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "action_execute", "_meta": {"progressToken": "leave"},
        "arguments": {"entity_type": "PurchaseOrder", "action": "makePayment", "entity_ids": ids,
                      "idempotency_key": "mcp-leave", "options": {"chunk_size": 25, "max_concurrent": 2}}}});
    let mut response = reqwest::Client::new()
        .post(format!("{}/mcp", host.url))
        .bearer_auth(ADMIN)
        .header("mcp-protocol-version", "2025-11-25")
        .header("accept", "application/json, text/event-stream")
        .body(call.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let content_type = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        content_type.starts_with("text/event-stream"),
        "{content_type}"
    );
    let mut read = String::new();
    while !read.contains("notifications/progress") {
        let chunk = tokio::time::timeout(Duration::from_secs(30), response.chunk())
            .await
            .expect("a progress notification within 30 s")
            .unwrap()
            .expect("the stream is open");
        read.push_str(&String::from_utf8_lossy(&chunk));
    }
    drop(response);
    let paid = || async {
        graph
            .query("MATCH (o:PurchaseOrder {status: 'paid'}) WHERE o.id STARTS WITH 'PO-LEAVE' RETURN count(o)")
            .await
            .unwrap()[0][0]
            .as_i64()
            .unwrap()
    };
    // What was running when the client left finishes; then nothing more starts.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let settled = paid().await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let later = paid().await;
    eprintln!("paid after the client left: {settled}, 3 s later {later}");
    assert_eq!(settled, later, "chunks kept starting after the client left");
    assert!(later < ORDERS as i64, "the whole batch ran: {later}");
    assert!(later > 0, "nothing ran before the client left");
    link.pace(None);
}
