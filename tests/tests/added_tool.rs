//! A graph tool added by a separate component, without forking kg-agent (issue #38 item 3).
//! `examples/query-tools-extension/` (Rust, built against the WIT contracts only) imports
//! and exports `kg:query-tools/query-tools` and adds `supplier_order_totals`; plugged into
//! our query-tools component (wac-graph's `plug`, as `wac plug` does) it is the query-tools
//! dependency of a copy of spin.toml, served by this run's host (devhost or real Spin) on
//! this run's graph (devgraph or Neo4j).
//!
//! Nothing in the dispatcher knows the tool: it appears in `GET /tools`, in MCP's
//! `tools/list` and among the tools the LLM is offered because the component lists it, and
//! the agent runs it when the (scripted) LLM calls it. Our tools still work through the
//! wrapper, and its status says it is there.

use kg_e2e::added_tool::manifest_with_extension;
use kg_e2e::auth::ADMIN;
use kg_e2e::llm_stub::{ScriptedLlm, call, text};
use kg_e2e::{Graph, Stack, mcp};
use serde_json::{Value, json};
use std::time::Instant;

const TOOL: &str = "supplier_order_totals";

/// The app serving the manifest with the extension (`stack.dir` holds both).
struct Extended {
    stack: Stack,
    llm: ScriptedLlm,
}

/// SUP-001's orders per status, `(status, orders, amount)`, asked of the graph directly.
async fn truth(graph: &Graph) -> Vec<(String, u64, f64)> {
    graph
        .query("MATCH (o:PurchaseOrder)-[:PLACED_WITH]->(:Supplier {id: 'SUP-001'}) RETURN o.status, count(o), sum(o.amount) ORDER BY o.status")
        .await
        .unwrap()
        .iter()
        .map(|row| {
            (
                row[0].as_str().unwrap().to_string(),
                row[1].as_u64().unwrap(),
                row[2].as_f64().unwrap(),
            )
        })
        .collect()
}

/// Panics unless `data` (the tool's answer) is SUP-001's true totals.
fn assert_true_totals(data: &Value, truth: &[(String, u64, f64)]) {
    assert_eq!(data["supplier_id"], "SUP-001", "{data}");
    assert_eq!(data["supplier"], "ACME Industrial", "{data}");
    assert_eq!(data["orders"], 24, "{data}");
    let by_status = data["by_status"].as_array().unwrap();
    assert_eq!(by_status.len(), truth.len(), "{data}");
    for (got, (status, orders, amount)) in by_status.iter().zip(truth) {
        assert_eq!(got["status"], status.as_str(), "{data}");
        assert_eq!(got["orders"], *orders, "{data}");
        let got_amount = got["amount"].as_f64().unwrap();
        assert!(
            (got_amount - amount).abs() < 0.01,
            "{status}: {got_amount} ≠ {amount}"
        );
    }
}

#[tokio::test]
async fn a_tool_added_by_a_separate_component_is_listed_and_called_by_the_agent() {
    let started = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let manifest = manifest_with_extension(dir.path()).await.unwrap();
    let composed = std::fs::metadata(dir.path().join("query-tools.wasm"))
        .unwrap()
        .len();
    eprintln!(
        "added_tool: extension built and plugged into our query tools ({composed} bytes) in {:.1?}",
        started.elapsed()
    );
    let graph = Graph::start().await.unwrap();
    let llm = ScriptedLlm::start().await;
    let stack = Stack::serve(&manifest, graph, dir, &llm.variables())
        .await
        .unwrap();
    let app = Extended { stack, llm };

    the_tool_is_listed_after_ours(&app).await;
    the_tool_answers_from_the_graph_and_refuses_bad_arguments(&app).await;
    our_tools_still_answer_through_the_wrapper(&app).await;
    the_agent_offers_the_tool_to_the_llm_and_runs_its_call(&app).await;
    an_mcp_client_finds_and_calls_the_tool(&app).await;
    eprintln!(
        "added_tool: on {} in {:.1?} (build, plug, start and requests)",
        app.stack.host.kind.name(),
        started.elapsed()
    );
}

async fn the_tool_is_listed_after_ours(app: &Extended) {
    let (status, listed) = app.stack.host.get("/tools").await.unwrap();
    assert_eq!(status, 200, "{listed}");
    let tools = listed["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    for ours in ["get_node_statistics", "search_instances", "run_read_cypher"] {
        assert!(names.contains(&ours), "{ours} in {names:?}");
    }
    assert_eq!(names.last(), Some(&TOOL), "{names:?}");
    assert_eq!(names.iter().filter(|n| **n == TOOL).count(), 1);
    let added = tools.last().unwrap();
    assert_eq!(
        added["parameters"]["required"],
        json!(["supplier_id"]),
        "{added}"
    );
    assert!(
        added["description"]
            .as_str()
            .unwrap()
            .contains("counted and summed per status"),
        "{added}"
    );

    let (_, health) = app.stack.host.get("/health").await.unwrap();
    let query_tools = health["components"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "query-tools")
        .unwrap_or_else(|| panic!("no query-tools in {health}"));
    let extension = query_tools["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "extension")
        .unwrap_or_else(|| panic!("no extension check in {query_tools}"));
    assert_eq!(
        extension["detail"],
        format!("supplier-tools 0.1.0 adds {TOOL}"),
        "{extension}"
    );
}

async fn the_tool_answers_from_the_graph_and_refuses_bad_arguments(app: &Extended) {
    let path = format!("/tools/{TOOL}");
    let (status, r) = app
        .stack
        .host
        .send("POST", &path, r#"{"supplier_id": "SUP-001"}"#)
        .await
        .unwrap();
    assert_eq!(status, 200, "{r}");
    assert_true_totals(&r["data"], &truth(&app.stack.graph).await);
    assert!(
        r["summary"]
            .as_str()
            .unwrap()
            .starts_with("SUP-001 (ACME Industrial): 24 orders in "),
        "{r}"
    );

    for (body, status, words) in [
        ("{}", 400, "`supplier_id` is required"),
        (
            r#"{"supplier_id": 7}"#,
            400,
            "`supplier_id` must be a string",
        ),
        (
            r#"{"supplier_id": "SUP-001", "status": "paid"}"#,
            400,
            "unknown argument `status`",
        ),
        (
            r#"{"supplier_id": "SUP-999"}"#,
            404,
            "no supplier has the id `SUP-999`",
        ),
    ] {
        let (got, r) = app.stack.host.send("POST", &path, body).await.unwrap();
        assert_eq!(got, status, "{body}: {r}");
        assert!(r.to_string().contains(words), "{body}: {r}");
    }
}

async fn our_tools_still_answer_through_the_wrapper(app: &Extended) {
    let (status, r) = app
        .stack
        .host
        .send("POST", "/tools/get_node_statistics", "{}")
        .await
        .unwrap();
    assert_eq!(status, 200, "{r}");
    assert!(!r["data"]["labels"].as_array().unwrap().is_empty(), "{r}");
    let (status, r) = app
        .stack
        .host
        .send(
            "POST",
            "/tools/run_read_cypher",
            r#"{"query": "MATCH (n) DETACH DELETE n"}"#,
        )
        .await
        .unwrap();
    assert_eq!(status, 400, "the guard still refuses writes: {r}");
    assert_eq!(r["error"]["code"], "invalid_argument", "{r}");
}

/// The LLM is offered the tool (nothing in the dispatcher names it), calls it, and reads
/// its answer before replying.
async fn the_agent_offers_the_tool_to_the_llm_and_runs_its_call(app: &Extended) {
    app.llm.then([
        call(TOOL, json!({"supplier_id": "SUP-001"})),
        text("ACME has 24 orders; see the totals per status."),
        text("ACME Industrial (SUP-001) has 24 purchase orders."),
    ]);
    let (status, r) = app
        .stack
        .host
        .send(
            "POST",
            "/chat",
            &json!({"message": "Which orders does supplier SUP-001 have, per status?", "routing_mode": "rule", "trace": true})
                .to_string(),
        )
        .await
        .unwrap();
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["route"]["intent"], "query", "{r}");
    assert_eq!(
        r["answer"], "ACME Industrial (SUP-001) has 24 purchase orders.",
        "{r}"
    );
    let calls: Vec<&Value> = r["intermediate_steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["type"] == "tool_call")
        .collect();
    assert_eq!(calls.len(), 1, "{r}");
    assert!(calls[0].to_string().contains(TOOL), "{}", calls[0]);
    let requests = app.llm.requests();
    assert_eq!(requests.len(), 3, "one LLM call per scripted reply");
    let offered: Vec<&str> = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(offered.contains(&TOOL), "{offered:?}");
    // The model read the tool's answer: the totals, as the component computed them.
    let second = requests[1]["messages"].to_string();
    assert!(second.contains(r#"\"orders\":24"#), "{second}");
    assert!(second.contains("ACME Industrial"), "{second}");
}

/// An MCP client (the official Python SDK) finds the tool in `tools/list` and calls it.
async fn an_mcp_client_finds_and_calls_the_tool(app: &Extended) {
    let report = mcp::session(
        &app.stack.host,
        ADMIN,
        &json!([
            {"op": "list_tools"},
            {"op": "call", "name": TOOL, "arguments": {"supplier_id": "SUP-001"}},
        ]),
    )
    .await
    .unwrap();
    let results = report["results"].as_array().unwrap();
    let listed = results[0]["tools"].as_array().unwrap();
    assert!(listed.iter().any(|t| t["name"] == TOOL), "{}", results[0]);
    let called = &results[1];
    assert_eq!(called["isError"], false, "{called}");
    assert_true_totals(
        &called["structured"]["data"],
        &truth(&app.stack.graph).await,
    );
}
