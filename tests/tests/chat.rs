//! The agent end to end: HTTP → dispatcher (router, ReAct loop, summariser, memory) → the
//! components → devgraph, with a scripted OpenAI-compatible LLM. Routing uses the rule
//! mode so the script holds only the reasoning and summarising calls.

use kg_e2e::llm_stub::{Reply, ScriptedLlm, call, text};
use kg_e2e::{Stack, auth, events};
use serde_json::{Value, json};

async fn stack_with(llm: &ScriptedLlm, extra: &[(&str, String)]) -> Stack {
    let mut variables = llm.variables();
    variables.extend(extra.iter().cloned());
    Stack::start_with(&variables).await.unwrap()
}

async fn chat(stack: &Stack, body: Value) -> (u16, Value) {
    stack
        .host
        .send("POST", "/chat", &body.to_string())
        .await
        .unwrap()
}

/// The SSE events of one `/chat/stream` request, as JSON objects, each checked against
/// docs/events.schema.json (and the stream's order: `completed`, `done` last).
async fn stream(stack: &Stack, body: Value) -> Vec<Value> {
    let response = reqwest::Client::new()
        .post(format!("{}/chat/stream", stack.host.url))
        .bearer_auth(auth::ADMIN)
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let text = response.text().await.unwrap();
    let events: Vec<Value> = text
        .split("\n\n")
        .filter_map(|frame| frame.lines().find_map(|l| l.strip_prefix("data: ")))
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    events::check_stream(&events);
    events
}

fn kinds(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_string())
        .collect()
}

fn messages_text(request: &Value) -> String {
    request["messages"].to_string()
}

#[tokio::test]
async fn small_talk_is_answered_without_tools() {
    let llm = ScriptedLlm::start().await;
    llm.then([text("Hello! Ask me about suppliers, orders or payments.")]);
    let stack = stack_with(&llm, &[]).await;
    let (status, r) = chat(&stack, json!({"message": "hello", "routing_mode": "rule"})).await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["route"]["intent"], "answer", "{r}");
    assert_eq!(
        r["answer"],
        "Hello! Ask me about suppliers, orders or payments."
    );
    let requests = llm.requests();
    assert_eq!(requests.len(), 1);
    assert!(
        requests[0].get("tools").is_none(),
        "no tools for small talk"
    );
    let id = r["conversation_id"].as_str().unwrap();

    // Remembered, then forgotten.
    let (status, c) = stack
        .host
        .get(&format!("/conversations/{id}"))
        .await
        .unwrap();
    assert_eq!(status, 200, "{c}");
    let roles: Vec<&str> = c["turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant"]);
    let (status, _) = stack
        .host
        .send("DELETE", &format!("/conversations/{id}"), "")
        .await
        .unwrap();
    assert_eq!(status, 200);
    let (status, _) = stack
        .host
        .get(&format!("/conversations/{id}"))
        .await
        .unwrap();
    assert_eq!(status, 404);
}

#[tokio::test]
async fn a_multi_step_question_uses_the_graph_tools_and_cites_what_they_returned() {
    let llm = ScriptedLlm::start().await;
    llm.then([
        call("search_instances", json!({"search_term": "Assembly 36"})),
        call(
            "get_instance_neighbors",
            json!({"instance": "PRD-036", "hops": 2, "direction": "in", "relationship_types": ["COMPONENT_OF", "SUPPLIES"]}),
        ),
        text("Suppliers of PRD-036's parts: see the tool results."),
        text("The parts of PRD-036 come from SUP-001 and SUP-002."),
    ]);
    let stack = stack_with(&llm, &[]).await;
    let (status, r) = chat(
        &stack,
        json!({"message": "Which suppliers deliver parts used in product PRD-036?", "routing_mode": "rule", "trace": true}),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["route"]["intent"], "query");
    assert_eq!(
        r["answer"],
        "The parts of PRD-036 come from SUP-001 and SUP-002."
    );
    let steps: Vec<&str> = r["intermediate_steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        steps.iter().filter(|s| **s == "tool_call").count(),
        2,
        "{steps:?}"
    );
    assert!(
        r["graph_data"]["nodes"].as_array().unwrap().len() > 1,
        "{r}"
    );
    // The model saw real graph data before answering: the suppliers of the parts, by name.
    let requests = llm.requests();
    let third = messages_text(&requests[2]);
    let truth = stack
        .graph
        .query("MATCH (s:Supplier)-[:SUPPLIES]->(:Product)-[:COMPONENT_OF]->(:Product {id: 'PRD-036'}) RETURN DISTINCT s.name")
        .await
        .unwrap();
    assert!(!truth.is_empty());
    for row in truth {
        assert!(third.contains(row[0].as_str().unwrap()), "{third}");
    }
    assert!(r["usage"]["prompt_tokens"].as_u64().unwrap() >= 30);
}

/// Seed 000 §11 end to end: every order of ACME, planned by the model, executed with
/// progress, some failing for different reasons, summarised; the exact event order.
#[tokio::test]
async fn paying_every_order_of_acme_streams_plan_progress_and_an_honest_report() {
    let llm = ScriptedLlm::start().await;
    let stack = stack_with(&llm, &[]).await;
    let ids: Vec<String> = stack
        .graph
        .query("MATCH (o:PurchaseOrder)-[:PLACED_WITH]->(:Supplier {id: 'SUP-001'}) RETURN o.id ORDER BY o.id")
        .await
        .unwrap()
        .iter()
        .map(|r| r[0].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 24);
    llm.then([
        call("search_instances", json!({"search_term": "ACME"})),
        call("propose_action_plan", json!({"entity_type": "PurchaseOrder", "action_name": "makePayment", "entity_ids": ids})),
        text("I have proposed paying all 24 orders."),
        text("Paid some of ACME's orders; the others failed: insufficient funds, already paid, not approved, cancelled."),
    ]);
    let events = stream(
        &stack,
        json!({"message": "Pay all orders of supplier ACME", "routing_mode": "rule"}),
    )
    .await;
    let mut order: Vec<String> = kinds(&events)
        .into_iter()
        .filter(|k| {
            !matches!(
                k.as_str(),
                "thinking" | "graph_data" | "action_progress" | "action_error" | "trace"
            )
        })
        .collect();
    // The answer may arrive as several `content` deltas.
    order.dedup_by(|a, b| a == "content" && b == "content");
    assert_eq!(
        order,
        [
            "conversation_id",
            "route",
            "tool_call",
            "tool_result",
            "tool_call",
            "tool_result",
            "action_plan",
            "action_complete",
            "content_start",
            "content",
            "completed",
            "done"
        ],
        "{events:#?}"
    );
    // The plan names each target next to its id (orders have no `name`: their id).
    let plan = &events[kinds(&events)
        .iter()
        .position(|k| k == "action_plan")
        .unwrap()]["plan"];
    for target in plan["targets"].as_array().unwrap() {
        assert_eq!(target["entity_name"], target["entity_id"], "{plan}");
    }
    // `completed` carries the whole answer, the report and the turn's metadata.
    let completed = &events[events.len() - 2];
    assert_eq!(completed["status"], "answered");
    assert_eq!(completed["actions"]["total"], 24);
    assert_eq!(completed["route"]["method"], "rule");
    assert_eq!(completed["model_used"], "stub");
    assert_eq!(completed["steps"], 3);
    assert_eq!(completed["usage"]["total_tokens"], 60);
    assert!(
        completed["answer"]
            .as_str()
            .unwrap()
            .contains("insufficient funds"),
        "{completed}"
    );
    let all = kinds(&events);
    let plan_at = all.iter().position(|k| k == "action_plan").unwrap();
    let complete_at = all.iter().position(|k| k == "action_complete").unwrap();
    let progress: Vec<&Value> = events[plan_at..complete_at]
        .iter()
        .filter(|e| e["type"] == "action_progress")
        .collect();
    assert_eq!(progress.len(), 24);
    assert_eq!(progress.last().unwrap()["completed"], 24);
    let report = &events[complete_at]["results"];
    assert_eq!(report["total"], 24);
    let reasons: std::collections::BTreeSet<&str> = report["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["error"].as_str().unwrap())
        .collect();
    assert_eq!(
        reasons,
        [
            "Insufficient funds",
            "Order already paid",
            "Order is cancelled",
            "Order is not approved"
        ]
        .into_iter()
        .collect()
    );
    let errors = all.iter().filter(|k| *k == "action_error").count() as u64;
    assert_eq!(report["failed"].as_u64(), Some(errors));
    assert_eq!(events.last().unwrap()["type"], "done");
    // The summariser was given the batch report.
    let last = llm.requests().last().unwrap().to_string();
    assert!(last.contains("Insufficient funds"), "{last}");
}

/// `blockSupplier` requires approval (and, unlike `cancel`, no second pair of eyes, so the
/// owner of the conversation may say "yes" to it).
#[tokio::test]
async fn an_action_that_needs_approval_pauses_then_resumes_on_yes_or_cancels_on_no() {
    let llm = ScriptedLlm::start().await;
    let stack = stack_with(&llm, &[]).await;
    let blocked = || {
        let stack = &stack;
        async move {
            stack
                .graph
                .query("MATCH (s:Supplier {id: 'SUP-002'}) RETURN s.blocked")
                .await
                .unwrap()[0][0]
                .clone()
        }
    };
    assert_eq!(blocked().await, false);
    let propose = || {
        call(
            "propose_action_plan",
            json!({"entity_type": "Supplier", "action_name": "blockSupplier", "entity_ids": ["SUP-002"], "parameters": {"reason": "audit"}}),
        )
    };
    llm.then([propose(), text("Proposed.")]);
    let (status, r) = chat(
        &stack,
        json!({"message": "Block supplier SUP-002 for the audit", "routing_mode": "rule"}),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    let token = r["approval"]["approval_token"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        r["approval"]["reason"]
            .as_str()
            .unwrap()
            .contains("requires approval"),
        "{r}"
    );
    assert!(r["answer"].as_str().unwrap().contains("yes"), "{r}");
    // The person approving reads the supplier's name, not only its id.
    let supplier_name = stack
        .graph
        .query("MATCH (s:Supplier {id: 'SUP-002'}) RETURN s.name")
        .await
        .unwrap()[0][0]
        .clone();
    assert_eq!(
        r["approval"]["plan"]["targets"][0],
        json!({"entity_id": "SUP-002", "entity_name": supplier_name}),
        "{r}"
    );
    assert_eq!(r["route"]["method"], "rule", "{r}");
    assert_eq!(blocked().await, false, "nothing ran yet");
    let conversation = r["conversation_id"].as_str().unwrap().to_string();

    // "no" in the same conversation cancels; the token is spent (a recorded rejection).
    let (_, r) = chat(
        &stack,
        json!({"message": "no", "conversation_id": conversation}),
    )
    .await;
    assert!(r["answer"].as_str().unwrap().contains("Cancelled"), "{r}");
    assert_eq!(blocked().await, false);
    let (status, e) = stack
        .host
        .send(
            "POST",
            "/chat/approve",
            &json!({"approval_token": token}).to_string(),
        )
        .await
        .unwrap();
    assert!(
        status == 404 || (status == 409 && e["error"]["code"] == "approval_rejected"),
        "{status} {e}"
    );
    assert_eq!(blocked().await, false);

    // Again, and "yes" — on a fresh request — runs it.
    llm.then([
        propose(),
        text("Proposed."),
        text("Supplier SUP-002 is blocked."),
    ]);
    let (_, r) = chat(&stack, json!({"message": "Block supplier SUP-002 for the audit", "conversation_id": conversation, "routing_mode": "rule"})).await;
    assert!(r["approval"]["approval_token"].is_string(), "{r}");
    let (status, r) = chat(
        &stack,
        json!({"message": "确认", "conversation_id": conversation}),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["actions"]["succeeded"], 1, "{r}");
    assert_eq!(blocked().await, true);
    assert_eq!(llm.remaining(), 0);
}

#[tokio::test]
async fn a_failing_tool_is_an_observation_and_the_step_limit_ends_the_loop() {
    let llm = ScriptedLlm::start().await;
    llm.then([
        call("get_instances_by_class", json!({"class_name": "Warehouse"})),
        call("search_instances", json!({"search_term": "ACME"})),
        text("From what I gathered, ACME is SUP-001."),
    ]);
    let stack = stack_with(&llm, &[("agent_max_steps", "2".to_string())]).await;
    let (status, r) = chat(&stack, json!({"message": "Tell me about warehouses and ACME", "routing_mode": "rule", "trace": true})).await;
    assert_eq!(status, 200, "{r}");
    let results: Vec<&Value> = r["intermediate_steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["type"] == "tool_result")
        .collect();
    assert_eq!(
        results[0]["success"], false,
        "the unknown class failed: {r}"
    );
    assert_eq!(results[1]["success"], true);
    let requests = llm.requests();
    assert_eq!(requests.len(), 3, "two loop steps, then the summariser");
    assert!(
        requests[1].to_string().contains("Warehouse"),
        "the failure reached the model"
    );
    assert!(
        requests[2]
            .to_string()
            .to_lowercase()
            .contains("step limit"),
        "{}",
        requests[2]
    );
    assert_eq!(r["answer"], "From what I gathered, ACME is SUP-001.");
}

#[tokio::test]
async fn llm_errors_are_retried_then_reported_clearly() {
    let llm = ScriptedLlm::start().await;
    llm.then([Reply::Status(500), Reply::Status(503), text("Hi there!")]);
    let stack = stack_with(&llm, &[]).await;
    let (status, r) = chat(&stack, json!({"message": "hello", "routing_mode": "rule"})).await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["answer"], "Hi there!");
    assert_eq!(llm.requests().len(), 3);

    // Down: the JSON answer and the stream both say so; tools still work.
    let down = Stack::start_with(&[("llm_origin", "http://127.0.0.1:9".to_string())])
        .await
        .unwrap();
    let (status, r) = chat(&down, json!({"message": "hello", "routing_mode": "rule"})).await;
    assert_eq!(status, 503, "{r}");
    assert_eq!(r["error"]["code"], "llm_unavailable");
    let response = down
        .host
        .request_as(
            down.host.key.as_deref(),
            "POST",
            "/chat",
            &json!({"message": "hello", "routing_mode": "rule"}).to_string(),
        )
        .await
        .unwrap();
    assert_eq!(response.status(), 503);
    assert_eq!(
        response.headers().get("retry-after").map(|v| v.as_bytes()),
        Some(&b"5"[..]),
        "an unavailable LLM's 503 says when to retry"
    );
    let events = stream(&down, json!({"message": "hello", "routing_mode": "rule"})).await;
    let k = kinds(&events);
    assert_eq!(
        &k[k.len() - 3..],
        ["error", "completed", "done"],
        "{events:?}"
    );
    assert_eq!(events[k.len() - 3]["code"], "llm_unavailable");
    let (status, _) = down
        .host
        .send("POST", "/tools/get_node_statistics", "{}")
        .await
        .unwrap();
    assert_eq!(status, 200);
}

#[tokio::test]
async fn bad_chat_requests_are_refused_and_the_legacy_route_is_marked() {
    let llm = ScriptedLlm::start().await;
    let stack = stack_with(&llm, &[]).await;
    for (body, needle) in [
        (json!({}), "`message` is required"),
        (
            json!({"message": "hi", "conversation_id": "../../etc"}),
            "conversation id",
        ),
        (
            json!({"message": "hi", "routing_mode": "psychic"}),
            "rule, llm or hybrid",
        ),
    ] {
        let (status, e) = chat(&stack, body.clone()).await;
        assert_eq!(status, 400, "{body}: {e}");
        assert!(
            e["error"]["message"].as_str().unwrap().contains(needle),
            "{e}"
        );
    }
    assert!(
        llm.requests().is_empty(),
        "a bad request never reaches the LLM"
    );
    llm.then([text("Hello.")]);
    let response = reqwest::Client::new()
        .post(format!("{}/api/qa/query", stack.host.url))
        .bearer_auth(auth::ADMIN)
        .body(json!({"question": "hello", "routing_mode": "rule"}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(response.headers().contains_key("x-deprecation-warning"));
}

/// A follow-up is rewritten into a standalone question from the conversation's history
/// (router LLM), and the reasoning loop works on the rewritten question.
#[tokio::test]
async fn a_follow_up_is_rewritten_from_the_history() {
    let llm = ScriptedLlm::start().await;
    let stack = stack_with(&llm, &[]).await;
    llm.then([
        call("search_instances", json!({"search_term": "ACME"})),
        text("ACME is SUP-001."),
        text("ACME (SUP-001) has 24 purchase orders."),
    ]);
    let (_, first) = chat(
        &stack,
        json!({"message": "Which orders does ACME have?", "routing_mode": "rule"}),
    )
    .await;
    assert_eq!(
        first["answer"], "ACME (SUP-001) has 24 purchase orders.",
        "{first}"
    );
    let conversation = first["conversation_id"].as_str().unwrap();
    let before = llm.requests().len();

    llm.then([
        text(r#"{"intent": "query", "confidence": 0.92, "reason": "follow-up about invoices", "refined_question": "Which invoices belong to ACME's purchase orders?", "clarification": null}"#),
        // No tool needed: the step's own answer is the answer (no summariser call).
        text("ACME's orders have 17 invoices."),
    ]);
    let (status, r) = chat(&stack, json!({"message": "and their invoices?", "conversation_id": conversation, "routing_mode": "llm"})).await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(
        r["route"]["refined_question"], "Which invoices belong to ACME's purchase orders?",
        "{r}"
    );
    let requests = llm.requests();
    let router = requests[before].to_string();
    assert!(
        router.contains("Which orders does ACME have?"),
        "the router saw the history: {router}"
    );
    let last_user = requests[before + 1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .unwrap()["content"]
        .clone();
    assert_eq!(
        last_user,
        "Which invoices belong to ACME's purchase orders?"
    );
    assert_eq!(r["answer"], "ACME's orders have 17 invoices.");
}

/// The streamed answer arrives as `content` deltas that add up to the JSON answer.
#[tokio::test]
async fn the_streamed_answer_adds_up_and_done_is_last() {
    let llm = ScriptedLlm::start().await;
    let stack = stack_with(&llm, &[]).await;
    llm.then([text("There are 10 suppliers; SUP-007 is blocked.")]);
    let events = stream(
        &stack,
        json!({"message": "How many suppliers are there?", "routing_mode": "rule"}),
    )
    .await;
    assert_eq!(events[0]["type"], "conversation_id");
    let k = kinds(&events);
    let start = k.iter().position(|x| x == "content_start").unwrap();
    let text: String = events[start + 1..]
        .iter()
        .filter(|e| e["type"] == "content")
        .map(|e| e["content"].as_str().unwrap())
        .collect();
    assert_eq!(text, "There are 10 suppliers; SUP-007 is blocked.");
    assert_eq!(k.last().map(String::as_str), Some("done"));
    // A client that missed deltas finds the whole answer in `completed`.
    let completed = &events[k.len() - 2];
    assert_eq!(completed["answer"], text);
    assert_eq!(completed["model_used"], "stub");
    assert_eq!(completed["steps"], 1);
    // Progress events carry seed 001's envelope; the route its seed name.
    let route = events.iter().find(|e| e["type"] == "route").unwrap();
    assert_eq!(route["method"], "rule");
    let thinking = events.iter().find(|e| e["type"] == "thinking").unwrap();
    assert_eq!(thinking["state_summary"]["current_step"], "router");
}

/// Seed 002: `model_used` in `/chat` and the legacy answer; with `trace`, each reasoning
/// step carries its latency and token usage, each tool call its latency (property 21).
#[tokio::test]
async fn answers_name_the_model_and_trace_steps_carry_latency_and_usage() {
    let llm = ScriptedLlm::start().await;
    let stack = stack_with(&llm, &[]).await;
    llm.then([
        call("search_instances", json!({"search_term": "ACME"})),
        text("ACME is SUP-001."),
        text("ACME Industrial is supplier SUP-001."),
    ]);
    let (status, r) = chat(
        &stack,
        json!({"message": "Who is ACME?", "routing_mode": "rule", "trace": true}),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["model_used"], "stub", "{r}");
    assert_eq!(r["route"]["method"], "rule", "{r}");
    let steps = r["intermediate_steps"].as_array().unwrap();
    let traces: Vec<&Value> = steps
        .iter()
        .filter(|s| s["type"] == "trace" && s["kind"] == "step")
        .collect();
    assert_eq!(traces.len(), 2, "{r}");
    for t in traces {
        assert!(t["latency_ms"].as_f64().unwrap() > 0.0, "{t}");
        assert_eq!(t["usage"]["total_tokens"], 15, "{t}");
    }
    let result = steps.iter().find(|s| s["type"] == "tool_result").unwrap();
    assert!(result["latency_ms"].as_f64().unwrap() > 0.0, "{result}");

    llm.then([text("Hello.")]);
    let (status, r) = stack
        .host
        .send(
            "POST",
            "/api/qa/query",
            &json!({"question": "hello", "routing_mode": "rule"}).to_string(),
        )
        .await
        .unwrap();
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["model_used"], "stub", "{r}");
}

/// Item 6 of #16: `/chat/stream` retries a failing LLM like `/chat` (429/5xx, with
/// backoff), and an LLM that stays down ends the stream with an `error` naming the
/// endpoint and the attempts, then `completed` (status `failed`) and `done`.
#[tokio::test]
async fn the_stream_retries_the_llm_then_says_which_endpoint_failed() {
    let llm = ScriptedLlm::start().await;
    let stack = stack_with(&llm, &[]).await;
    llm.then([Reply::Status(429), Reply::Status(503), text("Hi there!")]);
    let events = stream(&stack, json!({"message": "hello", "routing_mode": "rule"})).await;
    let completed = &events[events.len() - 2];
    assert_eq!(completed["answer"], "Hi there!", "{events:?}");
    assert_eq!(llm.requests().len(), 3);

    let down = Stack::start_with(&[("llm_origin", "http://127.0.0.1:9".to_string())])
        .await
        .unwrap();
    let events = stream(&down, json!({"message": "hello", "routing_mode": "rule"})).await;
    let k = kinds(&events);
    assert_eq!(
        &k[k.len() - 3..],
        ["error", "completed", "done"],
        "{events:?}"
    );
    let error = &events[k.len() - 3];
    assert_eq!(error["code"], "llm_unavailable", "{error}");
    assert_eq!(error["attempts"], 3, "{error}");
    assert!(
        error["provider"]
            .as_str()
            .unwrap()
            .starts_with("http://127.0.0.1:9"),
        "{error}"
    );
    assert_eq!(events[k.len() - 2]["status"], "failed");
}

/// A slow LLM call does not leave the stream silent: a heartbeat comment goes out every
/// 10 s while it is pending.
#[tokio::test]
async fn a_slow_llm_call_gets_heartbeats() {
    let llm = ScriptedLlm::start().await;
    let stack = stack_with(&llm, &[]).await;
    llm.then([Reply::Slow(
        std::time::Duration::from_millis(10_500),
        Box::new(text("Finally, hello.")),
    )]);
    let response = reqwest::Client::new()
        .post(format!("{}/chat/stream", stack.host.url))
        .bearer_auth(auth::ADMIN)
        .body(json!({"message": "hello", "routing_mode": "rule"}).to_string())
        .send()
        .await
        .unwrap();
    let body = response.text().await.unwrap();
    let heartbeat = body
        .find(": heartbeat")
        .expect("a heartbeat while the LLM was slow");
    let content = body.find("event: content").expect("the answer");
    assert!(heartbeat < content, "{body}");
    assert!(body.contains("Finally, hello."));
    let events: Vec<Value> = body
        .split("\n\n")
        .filter_map(|frame| frame.lines().find_map(|l| l.strip_prefix("data: ")))
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    events::check_stream(&events);
}
