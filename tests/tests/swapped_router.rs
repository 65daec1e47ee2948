//! A router written in Python swapped in through spin.toml (issue #38 item 2): the
//! component `examples/router-python/build.sh` makes with componentize-py (from PyPI; no
//! Rust), plugged into the dispatcher as its `kg:router/router@0.1.0` dependency by a copy
//! of spin.toml made on the spot, served by this run's host (devhost or real Spin).
//!
//! Its decisions are the ones the agent acts on and the client sees: intents the Rust
//! router would not choose ("banana" is a clarification, not a question for the agent, so no LLM call),
//! confidences the Rust router never gives, reasons starting `python-rules:`, method `rule`
//! with a warning when `hybrid` was asked (it has no LLM), and its refusal of a long message
//! (a WIT `result` error) turned into the dispatcher's fallback. The rest of the application
//! is unchanged: a graph question still reaches the query tools and gets a grounded answer,
//! and an action request streams its plan, execution and report.
//!
//! One application start for all of it (a Python router makes the host's start-up the
//! longest part: its 18 MB component is compiled with the rest). Needs python3 with venv
//! and PyPI (build.sh): without them the test fails, it is never skipped.

use kg_e2e::llm_stub::{ScriptedLlm, call, text};
use kg_e2e::swapped_router::{manifest_with_router, python_router};
use kg_e2e::{Graph, Stack, auth, events, sse};
use serde_json::{Value, json};
use std::time::Instant;

/// The reason every decision of the Python router starts with.
const PYTHON: &str = "python-rules: ";

/// The app served with the Python router, and what the tests drive it with.
/// The app serving the manifest with the Python router (`stack.dir` holds both).
struct Swapped {
    stack: Stack,
    llm: ScriptedLlm,
}

async fn chat(app: &Swapped, body: Value) -> Value {
    let (status, r) = app
        .stack
        .host
        .send("POST", "/chat", &body.to_string())
        .await
        .unwrap();
    assert_eq!(status, 200, "{r}");
    r
}

/// The events of one `/chat/stream` request, checked against docs/events.schema.json.
async fn stream(app: &Swapped, body: Value) -> Vec<Value> {
    let response = kg_e2e::chat_client::stream(&app.stack.host.url, auth::ADMIN, &body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let events = sse::events(&response.text().await.unwrap());
    events::check_stream(&events);
    events
}

/// The route a `/chat` answer or a `route` event reports is the Python router's: this
/// intent and confidence, method `rule`, its reason.
fn assert_python_route(route: &Value, intent: &str, confidence: f64, reason: &str) {
    assert_eq!(route["intent"], intent, "{route}");
    let got = route["confidence"].as_f64().unwrap();
    // An f32 across WIT: 0.73 comes back as 0.7300000190734863.
    assert!((got - confidence).abs() < 1e-6, "confidence {got}: {route}");
    assert_eq!(route["method"], "rule", "{route}");
    assert_eq!(
        route["reason"].as_str().unwrap(),
        format!("{PYTHON}{reason}"),
        "{route}"
    );
}

#[tokio::test]
async fn a_python_router_swapped_in_through_spin_toml_makes_the_decisions() {
    let started = Instant::now();
    let (router, build) = python_router().await.unwrap();
    let size = std::fs::metadata(&router).unwrap().len();
    eprintln!(
        "swapped_router: build.sh took {build:.1?}; {} is {size} bytes",
        router.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let manifest = manifest_with_router(dir.path(), &router).unwrap();
    let graph = Graph::start().await.unwrap();
    let llm = ScriptedLlm::start().await;
    let host_started = Instant::now();
    let stack = Stack::serve(&manifest, graph, dir, &llm.variables())
        .await
        .unwrap();
    eprintln!(
        "swapped_router: {} serves the swapped manifest after {:.1?}",
        stack.host.kind.name(),
        host_started.elapsed()
    );
    let app = Swapped { stack, llm };

    the_router_status_is_the_python_one(&app).await;
    a_word_without_keyword_is_a_clarification_without_any_llm_call(&app).await;
    a_graph_question_reaches_the_query_tools_and_is_answered(&app).await;
    an_action_request_streams_its_plan_execution_and_report(&app).await;
    a_refusal_of_the_router_becomes_the_dispatchers_fallback(&app).await;
    eprintln!(
        "swapped_router: on {} in {:.1?} (build, start and turns)",
        app.stack.host.kind.name(),
        started.elapsed()
    );
}

/// `GET /health` asks the router for its status over WIT: the Python one answers.
async fn the_router_status_is_the_python_one(app: &Swapped) {
    let (_, health) = app.stack.host.get("/health").await.unwrap();
    let router = health["components"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "router")
        .unwrap_or_else(|| panic!("no router in {health}"));
    assert_eq!(router["version"], "0.1.0-python-rules", "{router}");
    assert_eq!(router["ready"], true, "{router}");
    assert_eq!(
        router["checks"][0]["detail"], "python-rules (Python, componentize-py)",
        "{router}"
    );
}

/// The Rust router sends "banana" to the agent as a question (`query`, 0.5, "a short
/// remark…"), which asks the LLM; the Python one finds no keyword and asks the user, in its
/// own words.
async fn a_word_without_keyword_is_a_clarification_without_any_llm_call(app: &Swapped) {
    let r = chat(app, json!({"message": "banana", "routing_mode": "rule"})).await;
    assert_python_route(&r["route"], "clarify", 0.41, "no keyword matched");
    assert!(
        r["answer"]
            .as_str()
            .unwrap()
            .starts_with("python-rules could not tell what you need"),
        "{r}"
    );
    assert!(app.llm.requests().is_empty(), "{:?}", app.llm.requests());
}

/// Asked in `hybrid` mode, the Python router still decides by its rules (method `rule`,
/// with a warning): no routing call reaches the LLM, whose every request is the agent's.
/// The refined question (the message trimmed) is what the agent asks; the query tools
/// read the graph, and the model sees what they returned.
async fn a_graph_question_reaches_the_query_tools_and_is_answered(app: &Swapped) {
    app.llm.then([
        call("search_instances", json!({"search_term": "Assembly 36"})),
        call(
            "get_instance_neighbors",
            json!({"instance": "PRD-036", "hops": 2, "direction": "in", "relationship_types": ["COMPONENT_OF", "SUPPLIES"]}),
        ),
        text("Suppliers of PRD-036's parts: see the tool results."),
        text("The parts of PRD-036 come from SUP-001 and SUP-002."),
    ]);
    let question = "Which suppliers deliver parts used in product PRD-036?";
    let r = chat(
        app,
        json!({"message": format!("  {question}  "), "routing_mode": "hybrid", "trace": true}),
    )
    .await;
    let route = &r["route"];
    assert_python_route(route, "query", 0.73, "keyword `which` means query");
    assert_eq!(route["refined_question"], question, "{route}");
    assert_eq!(
        route["warnings"],
        json!(["python-rules has no LLM: decided by rules instead of hybrid"]),
        "{route}"
    );
    assert_eq!(
        r["answer"], "The parts of PRD-036 come from SUP-001 and SUP-002.",
        "{r}"
    );
    let tool_calls = r["intermediate_steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["type"] == "tool_call")
        .count();
    assert_eq!(tool_calls, 2, "{r}");
    assert!(
        r["graph_data"]["nodes"].as_array().unwrap().len() > 1,
        "{r}"
    );
    let requests = app.llm.requests();
    assert_eq!(
        requests.len(),
        4,
        "one LLM call per scripted reply, none to route"
    );
    assert!(requests[0].get("tools").is_some(), "{}", requests[0]);
    let messages = requests[0]["messages"].as_array().unwrap();
    assert_eq!(messages.last().unwrap()["content"], question);
    let truth = app
        .stack
        .graph
        .query("MATCH (s:Supplier)-[:SUPPLIES]->(:Product)-[:COMPONENT_OF]->(:Product {id: 'PRD-036'}) RETURN DISTINCT s.name")
        .await
        .unwrap();
    assert!(!truth.is_empty());
    let third = requests[2]["messages"].to_string();
    for row in truth {
        assert!(third.contains(row[0].as_str().unwrap()), "{third}");
    }
}

/// The action tools are offered only on an `action` route: that the plan is made and run
/// proves the Python router's `action` is the one the agent acted on.
async fn an_action_request_streams_its_plan_execution_and_report(app: &Swapped) {
    let ids: Vec<String> = app
        .stack
        .graph
        .query("MATCH (o:PurchaseOrder)-[:PLACED_WITH]->(:Supplier {id: 'SUP-001'}) RETURN o.id ORDER BY o.id")
        .await
        .unwrap()
        .iter()
        .map(|r| r[0].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 24);
    let before = app.llm.requests().len();
    app.llm.then([
        call("search_instances", json!({"search_term": "ACME"})),
        call("propose_action_plan", json!({"entity_type": "PurchaseOrder", "action_name": "makePayment", "entity_ids": ids})),
        text("I have proposed paying all 24 orders."),
        text("Paid some of ACME's orders; the others failed: insufficient funds, already paid, not approved, cancelled."),
    ]);
    let events = stream(
        app,
        json!({"message": "Pay all orders of supplier ACME", "routing_mode": "rule"}),
    )
    .await;
    let route = events.iter().find(|e| e["type"] == "route").unwrap();
    assert_python_route(route, "action", 0.81, "keyword `pay` means action");
    assert_eq!(route["refined_question"], "Pay all orders of supplier ACME");
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    for kind in ["tool_call", "action_plan", "action_complete", "content"] {
        assert!(kinds.contains(&kind), "no {kind} in {kinds:?}");
    }
    let completed = &events[events.len() - 2];
    assert_eq!(completed["status"], "answered", "{completed}");
    assert_eq!(completed["actions"]["total"], 24, "{completed}");
    assert_python_route(
        &completed["route"],
        "action",
        0.81,
        "keyword `pay` means action",
    );
    assert!(
        completed["answer"]
            .as_str()
            .unwrap()
            .contains("insufficient funds"),
        "{completed}"
    );
    let requests = app.llm.requests();
    assert_eq!(requests.len() - before, 4);
    let offered = requests[before]["tools"].to_string();
    assert!(offered.contains("propose_action_plan"), "{offered}");
}

/// The Python router refuses a message over 4,000 characters with a WIT `result` error
/// (the Rust one's limit is 10,000): the dispatcher treats the message as a question and
/// says why, in the router's words.
async fn a_refusal_of_the_router_becomes_the_dispatchers_fallback(app: &Swapped) {
    app.llm.then([text("That is a long message.")]);
    let r = chat(
        app,
        json!({"message": "word ".repeat(1000), "routing_mode": "rule"}),
    )
    .await;
    assert_eq!(r["route"]["intent"], "query", "{r}");
    assert_eq!(r["route"]["method"], "fallback", "{r}");
    assert_eq!(
        r["route"]["reason"],
        format!("{PYTHON}the message is longer than 4000 characters"),
        "{r}"
    );
    assert_eq!(r["answer"], "That is a long message.", "{r}");
}
