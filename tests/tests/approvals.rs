//! Approvals you can trust (issue #13), over real HTTP: plans from
//! `POST /actions/{type}/{name}/plan`, the same rules for the direct action API as for
//! the agent, tokens bound to their plan, redeemed once by an approver (also when two
//! instances race), expiring, rejectable, and four-eyes where the catalog asks for it.

use kg_e2e::llm_stub::{ScriptedLlm, call, text};
use kg_e2e::{AppHost, Graph, Pair, Stack, auth, chat_client};
use serde_json::{Value, json};

async fn post(host: &AppHost, key: &str, path: &str, body: Value) -> (u16, Value) {
    host.send_as(Some(key), "POST", path, &body.to_string())
        .await
        .unwrap()
}

fn assert_error(what: &str, (status, body): &(u16, Value), expected: u16, code: &str) {
    assert_eq!(*status, expected, "{what}: {body}");
    assert_eq!(body["error"]["code"], code, "{what}: {body}");
}

/// `POST /actions/{entity_type}/{action}/plan`, which must answer 200.
async fn plan(
    host: &AppHost,
    key: &str,
    entity_type: &str,
    action: &str,
    ids: &[String],
    parameters: Value,
) -> Value {
    let (status, r) = post(
        host,
        key,
        &format!("/actions/{entity_type}/{action}/plan"),
        json!({"entity_ids": ids, "parameters": parameters}),
    )
    .await;
    assert_eq!(status, 200, "plan {entity_type}.{action}: {r}");
    r
}

fn token_of(plan: &Value) -> String {
    assert_eq!(plan["approval_required"], true, "{plan}");
    plan["approval_token"]
        .as_str()
        .unwrap_or_else(|| panic!("no approval_token: {plan}"))
        .to_string()
}

async fn strings(graph: &Graph, statement: &str) -> Vec<String> {
    graph
        .query(statement)
        .await
        .unwrap()
        .iter()
        .map(|r| r[0].as_str().unwrap_or_default().to_string())
        .collect()
}

/// `n` orders in `status` whose supplier is not blocked, by id.
async fn orders(graph: &Graph, status: &str, n: usize) -> Vec<String> {
    let ids = strings(
        graph,
        &format!(
            "MATCH (o:PurchaseOrder {{status: '{status}'}})-[:PLACED_WITH]->(:Supplier {{blocked: false}}) \
             RETURN o.id ORDER BY o.id LIMIT {n}"
        ),
    )
    .await;
    assert_eq!(ids.len(), n, "the demo data has {n} {status} orders");
    ids
}

async fn order_status(graph: &Graph, id: &str) -> String {
    strings(
        graph,
        &format!("MATCH (o:PurchaseOrder {{id: '{id}'}}) RETURN o.status"),
    )
    .await[0]
        .clone()
}

async fn count(graph: &Graph, statement: &str) -> i64 {
    graph.query(statement).await.unwrap()[0][0]
        .as_i64()
        .unwrap()
}

async fn log_actors(graph: &Graph, action: &str) -> Vec<String> {
    strings(
        graph,
        &format!(
            "MATCH (l:ActionLog) WHERE l.action_name = '{action}' RETURN l.actor ORDER BY l.actor"
        ),
    )
    .await
}

#[tokio::test]
async fn a_plan_says_whether_it_needs_approval_and_changes_nothing() {
    let stack = Stack::start().await.unwrap();
    let (host, graph) = (&stack.host, &stack.graph);
    let approved = orders(graph, "approved", 2).await;

    let small = plan(
        host,
        auth::OPERATOR,
        "PurchaseOrder",
        "makePayment",
        &approved,
        json!({"reference": "R-1"}),
    )
    .await;
    assert_eq!(small["approval_required"], false, "{small}");
    for absent in ["reason", "approval_token", "expires_at"] {
        assert!(small[absent].is_null(), "{absent}: {small}");
        assert!(small.get(absent).is_some(), "{absent} is listed: {small}");
    }
    let p = &small["plan"];
    assert_eq!(p["entity_type"], "PurchaseOrder", "{small}");
    assert_eq!(p["action_name"], "makePayment");
    assert_eq!(p["total"], 2);
    let mut listed: Vec<String> = p["entity_ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    listed.sort();
    assert_eq!(listed, approved);
    assert_eq!(p["parameters"]["reference"], "R-1", "{small}");
    let hash = p["plan_hash"].as_str().unwrap().to_string();
    assert!(!hash.is_empty());

    // The hash is the plan's: order and duplicates of the ids do not change it, another
    // parameter does.
    let reordered = vec![
        approved[1].clone(),
        approved[0].clone(),
        approved[1].clone(),
    ];
    let again = plan(
        host,
        auth::OPERATOR,
        "PurchaseOrder",
        "makePayment",
        &reordered,
        json!({"reference": "R-1"}),
    )
    .await;
    assert_eq!(again["plan"]["plan_hash"], hash.as_str(), "{again}");
    let other = plan(
        host,
        auth::OPERATOR,
        "PurchaseOrder",
        "makePayment",
        &approved,
        json!({"reference": "R-2"}),
    )
    .await;
    assert_ne!(other["plan"]["plan_hash"], hash.as_str(), "{other}");

    // An action that requires approval, and a batch above the threshold (50).
    let cancel = plan(
        host,
        auth::OPERATOR,
        "PurchaseOrder",
        "cancel",
        &approved[..1],
        json!({"reason": "duplicate"}),
    )
    .await;
    assert_eq!(cancel["approval_required"], true, "{cancel}");
    assert!(
        cancel["reason"].as_str().is_some_and(|r| !r.is_empty()),
        "{cancel}"
    );
    token_of(&cancel);
    let expires = cancel["expires_at"].as_str().unwrap();
    assert!(
        expires.len() >= 20 && expires.contains('T') && expires.starts_with("20"),
        "RFC 3339: {expires}"
    );
    let many: Vec<String> = (1..=51).map(|i| format!("PO-{i:04}")).collect();
    let big = plan(
        host,
        auth::OPERATOR,
        "PurchaseOrder",
        "makePayment",
        &many,
        json!({}),
    )
    .await;
    assert_eq!(big["approval_required"], true, "{big}");
    assert_eq!(big["plan"]["total"], 51);
    let fifty = plan(
        host,
        auth::OPERATOR,
        "PurchaseOrder",
        "makePayment",
        &many[..50],
        json!({}),
    )
    .await;
    assert_eq!(fifty["approval_required"], false, "{fifty}");

    // Planning ran nothing.
    assert_eq!(count(graph, "MATCH (l:ActionLog) RETURN count(l)").await, 0);
    for id in &approved {
        assert_eq!(order_status(graph, id).await, "approved");
    }
    // Bad plans are refused like bad executions.
    let (status, e) = post(
        host,
        auth::OPERATOR,
        "/actions/PurchaseOrder/makePayment/plan",
        json!({"entity_ids": []}),
    )
    .await;
    assert_eq!(status, 400, "{e}");
    let (status, e) = post(
        host,
        auth::OPERATOR,
        "/actions/PurchaseOrder/nope/plan",
        json!({"entity_ids": ["PO-0001"]}),
    )
    .await;
    assert_eq!(status, 404, "{e}");
}

#[tokio::test]
async fn a_direct_execute_needs_a_token_issued_by_a_plan() {
    let stack = Stack::start_with(&[("approval_batch_threshold", "2".to_string())])
        .await
        .unwrap();
    let (host, graph) = (&stack.host, &stack.graph);
    let approved = orders(graph, "approved", 3).await;
    let cancel = "/actions/PurchaseOrder/cancel/execute";
    let pay = "/actions/PurchaseOrder/makePayment/execute";
    let reason = json!({"reason": "duplicate"});

    let r = post(
        host,
        auth::ADMIN,
        cancel,
        json!({"entity_ids": [approved[0]], "parameters": reason}),
    )
    .await;
    assert_error("cancel without a token", &r, 403, "approval_required");
    let r = post(
        host,
        auth::ADMIN,
        cancel,
        json!({"entity_ids": [approved[0]], "parameters": reason, "approval_token": "t"}),
    )
    .await;
    assert_error("cancel with an invented token", &r, 403, "approval_invalid");
    // The batch rule applies to the direct API too: 3 ids above a threshold of 2.
    let r = post(host, auth::ADMIN, pay, json!({"entity_ids": approved})).await;
    assert_error("3 payments, threshold 2", &r, 403, "approval_required");
    let r = post(
        host,
        auth::ADMIN,
        pay,
        json!({"entity_ids": approved, "approval_token": "invented"}),
    )
    .await;
    assert_error("3 payments, invented token", &r, 403, "approval_invalid");
    assert_eq!(count(graph, "MATCH (l:ActionLog) RETURN count(l)").await, 0);
    assert_eq!(order_status(graph, &approved[0]).await, "approved");

    // Within the threshold no token is needed.
    let (status, r) = post(
        host,
        auth::OPERATOR,
        pay,
        json!({"entity_ids": &approved[..2]}),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["total"], 2, "{r}");
}

#[tokio::test]
async fn a_token_is_redeemed_once_by_an_approver_for_exactly_its_plan() {
    let stack = Stack::start_with(&[("approval_batch_threshold", "2".to_string())])
        .await
        .unwrap();
    let (host, graph) = (&stack.host, &stack.graph);
    graph
        .write("MATCH (a:Account {id: 'ACC-MAIN'}) SET a.balance = 10000000.0")
        .await
        .unwrap();
    let ids = orders(graph, "approved", 3).await;
    let reference = json!({"reference": "R-1"});
    let planned = plan(
        host,
        auth::OPERATOR,
        "PurchaseOrder",
        "makePayment",
        &ids,
        reference.clone(),
    )
    .await;
    let token = token_of(&planned);
    let execute = "/actions/PurchaseOrder/makePayment/execute";

    // Not an approver.
    let (status, e) = post(
        host,
        auth::OPERATOR,
        execute,
        json!({"entity_ids": ids, "parameters": reference, "approval_token": token}),
    )
    .await;
    assert_eq!(status, 403, "{e}");
    assert_eq!(e["error"]["code"], "forbidden", "{e}");
    assert_eq!(e["error"]["detail"]["permission"], "actions:approve", "{e}");
    // Not the plan that was approved.
    let r = post(
        host,
        auth::OPAPPROVER,
        execute,
        json!({"entity_ids": &ids[..2], "parameters": reference, "approval_token": token}),
    )
    .await;
    assert_error("other ids", &r, 403, "approval_mismatch");
    let r = post(
        host,
        auth::OPAPPROVER,
        execute,
        json!({"entity_ids": ids, "parameters": {"reference": "R-2"}, "approval_token": token}),
    )
    .await;
    assert_error("other parameters", &r, 403, "approval_mismatch");
    assert_eq!(count(graph, "MATCH (l:ActionLog) RETURN count(l)").await, 0);

    // The same plan, ids in another order and repeated: runs, as the redeeming subject.
    let shuffled = vec![
        ids[2].clone(),
        ids[0].clone(),
        ids[1].clone(),
        ids[0].clone(),
    ];
    let (status, r) = post(
        host,
        auth::OPAPPROVER,
        execute,
        json!({"entity_ids": shuffled, "parameters": reference, "approval_token": token}),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["succeeded"], 3, "{r}");
    assert_eq!(
        log_actors(graph, "makePayment").await,
        ["opapprover", "opapprover", "opapprover"]
    );

    // Once only, whoever asks and however.
    let (status, e) = post(
        host,
        auth::OPAPPROVER,
        execute,
        json!({"entity_ids": ids, "parameters": reference, "approval_token": token}),
    )
    .await;
    assert_eq!(status, 409, "{e}");
    assert_eq!(e["error"]["code"], "approval_used", "{e}");
    let first = &e["error"]["detail"]["first"];
    assert_eq!(first["redeemed_by"], "opapprover", "{e}");
    assert!(first["redeemed_at"].is_string(), "{e}");
    assert!(first["idempotency_key"].is_string(), "{e}");
    let r = post(
        host,
        auth::ADMIN,
        "/chat/approve",
        json!({"approval_token": token, "approve": true}),
    )
    .await;
    assert_error("/chat/approve after a redemption", &r, 409, "approval_used");
    for id in &ids {
        assert_eq!(
            count(
                graph,
                &format!(
                    "MATCH (p:Payment)-[:PAYS]->(:PurchaseOrder {{id: '{id}'}}) RETURN count(p)"
                )
            )
            .await,
            1,
            "{id} paid once"
        );
    }
}

#[tokio::test]
async fn an_approval_expires() {
    let stack = Stack::start_with(&[("approval_ttl_s", "1".to_string())])
        .await
        .unwrap();
    let (host, graph) = (&stack.host, &stack.graph);
    let ids = orders(graph, "approved", 1).await;
    let reason = json!({"reason": "duplicate"});
    let token = token_of(
        &plan(
            host,
            auth::OPERATOR,
            "PurchaseOrder",
            "cancel",
            &ids,
            reason.clone(),
        )
        .await,
    );
    tokio::time::sleep(std::time::Duration::from_millis(2_000)).await;
    let r = post(
        host,
        auth::APPROVER,
        "/actions/PurchaseOrder/cancel/execute",
        json!({"entity_ids": ids, "parameters": reason, "approval_token": token}),
    )
    .await;
    assert_error("after the ttl", &r, 403, "approval_expired");
    let r = post(
        host,
        auth::APPROVER,
        "/chat/approve",
        json!({"approval_token": token, "approve": true}),
    )
    .await;
    assert_error("after the ttl, /chat/approve", &r, 403, "approval_expired");
    assert_eq!(order_status(graph, &ids[0]).await, "approved");
}

#[tokio::test]
async fn four_eyes_actions_need_another_approver() {
    let stack = Stack::start().await.unwrap();
    let (host, graph) = (&stack.host, &stack.graph);
    let ids = orders(graph, "approved", 1).await;
    let reason = json!({"reason": "duplicate"});
    let token = token_of(
        &plan(
            host,
            auth::OPAPPROVER,
            "PurchaseOrder",
            "cancel",
            &ids,
            reason.clone(),
        )
        .await,
    );
    let body = json!({"entity_ids": ids, "parameters": reason, "approval_token": token});
    let execute = "/actions/PurchaseOrder/cancel/execute";
    let r = post(host, auth::OPAPPROVER, execute, body.clone()).await;
    assert_error(
        "the requester approving its own cancel",
        &r,
        403,
        "four_eyes",
    );
    let r = post(
        host,
        auth::OPAPPROVER,
        "/chat/approve",
        json!({"approval_token": token, "approve": true}),
    )
    .await;
    assert_error("the same, through /chat/approve", &r, 403, "four_eyes");
    assert_eq!(order_status(graph, &ids[0]).await, "approved");

    let (status, r) = post(host, auth::APPROVER, execute, body).await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["succeeded"], 1, "{r}");
    assert_eq!(order_status(graph, &ids[0]).await, "cancelled");
    assert_eq!(log_actors(graph, "cancel").await, ["approver"]);
}

#[tokio::test]
async fn chat_approve_redeems_plan_tokens_and_a_rejection_is_final() {
    let llm = ScriptedLlm::start().await;
    llm.then((0..4).map(|_| text("Done.")));
    let stack = Stack::start_with(&llm.variables()).await.unwrap();
    let (host, graph) = (&stack.host, &stack.graph);
    let ids = orders(graph, "approved", 2).await;
    let reason = json!({"reason": "duplicate"});

    // Rejected: recorded, and final.
    let rejected = token_of(
        &plan(
            host,
            auth::OPERATOR,
            "PurchaseOrder",
            "cancel",
            &ids[..1],
            reason.clone(),
        )
        .await,
    );
    let (status, r) = post(
        host,
        auth::APPROVER,
        "/chat/approve",
        json!({"approval_token": rejected, "approve": false}),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    let r = post(
        host,
        auth::APPROVER,
        "/actions/PurchaseOrder/cancel/execute",
        json!({"entity_ids": &ids[..1], "parameters": reason, "approval_token": rejected}),
    )
    .await;
    assert_error("executing a rejected plan", &r, 409, "approval_rejected");
    let r = post(
        host,
        auth::APPROVER2,
        "/chat/approve",
        json!({"approval_token": rejected, "approve": true}),
    )
    .await;
    assert_error("approving a rejected plan", &r, 409, "approval_rejected");
    assert_eq!(order_status(graph, &ids[0]).await, "approved");

    // Approved through /chat/approve: the stored plan runs, once.
    let approved = token_of(
        &plan(
            host,
            auth::OPERATOR,
            "PurchaseOrder",
            "cancel",
            &ids[1..],
            reason.clone(),
        )
        .await,
    );
    let (status, r) = post(
        host,
        auth::APPROVER,
        "/chat/approve",
        json!({"approval_token": approved, "approve": true}),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(order_status(graph, &ids[1]).await, "cancelled");
    assert_eq!(log_actors(graph, "cancel").await, ["approver"]);
    let r = post(
        host,
        auth::APPROVER2,
        "/chat/approve",
        json!({"approval_token": approved, "approve": true}),
    )
    .await;
    assert_error("approving twice", &r, 409, "approval_used");
    let r = post(
        host,
        auth::APPROVER2,
        "/actions/PurchaseOrder/cancel/execute",
        json!({"entity_ids": &ids[1..], "parameters": reason, "approval_token": approved}),
    )
    .await;
    assert_error("executing after /chat/approve", &r, 409, "approval_used");
    assert_eq!(count(graph, "MATCH (l:ActionLog) RETURN count(l)").await, 1);
}

/// Two instances sharing one Redis and one graph: the same token redeemed on both at once
/// runs once; the other redemption gets 409 `approval_used`.
#[tokio::test]
async fn a_token_redeemed_concurrently_on_two_instances_runs_once() {
    let p = Pair::start(&[]).await.unwrap();
    let ids = orders(&p.graph, "approved", 1).await;
    let reason = json!({"reason": "duplicate"});
    let token = token_of(
        &plan(
            &p.a,
            auth::OPERATOR,
            "PurchaseOrder",
            "cancel",
            &ids,
            reason.clone(),
        )
        .await,
    );
    let body = json!({"entity_ids": ids, "parameters": reason, "approval_token": token});
    let execute = "/actions/PurchaseOrder/cancel/execute";
    let (on_a, on_b) = tokio::join!(
        post(&p.a, auth::APPROVER, execute, body.clone()),
        post(&p.b, auth::APPROVER, execute, body.clone())
    );
    let mut answers = [on_a, on_b];
    answers.sort_by_key(|a| a.0);
    assert_eq!(answers[0].0, 200, "{answers:?}");
    assert_eq!(answers[0].1["succeeded"], 1, "{answers:?}");
    assert_error("the second redemption", &answers[1], 409, "approval_used");
    let logs = count(
        &p.graph,
        &format!(
            "MATCH (l:ActionLog) WHERE l.action_name = 'cancel' AND l.entity_id = '{}' RETURN count(l)",
            ids[0]
        ),
    )
    .await;
    assert_eq!(logs, 1, "the graph changed once");
    assert_eq!(order_status(&p.graph, &ids[0]).await, "cancelled");
    // Later, on either instance, through either endpoint: used.
    let r = post(
        &p.b,
        auth::APPROVER2,
        "/chat/approve",
        json!({"approval_token": token, "approve": true}),
    )
    .await;
    assert_error("a third redemption", &r, 409, "approval_used");
}

/// The agent proposes a plan that needs approval in an operator's conversation: "yes" from
/// the owner, who holds no approver role, is refused and runs nothing; an approver's
/// `/chat/approve` runs it, as the approver.
#[tokio::test]
async fn the_agents_plan_waits_for_an_approver() {
    let llm = ScriptedLlm::start().await;
    let stack = Stack::start_with(&llm.variables()).await.unwrap();
    let (host, graph) = (&stack.host, &stack.graph);
    let ids = orders(graph, "approved", 1).await;
    let order = ids[0].clone();
    llm.then([
        call(
            "propose_action_plan",
            json!({"entity_type": "PurchaseOrder", "action_name": "cancel", "entity_ids": [order], "parameters": {"reason": "duplicate"}}),
        ),
        text("Proposed."),
        text(&format!("Order {order} is cancelled.")),
        text("spare"),
    ]);
    let (status, r) = post(
        host,
        auth::OPERATOR,
        "/chat",
        json!({"message": format!("Cancel order {order}, it is a duplicate"), "routing_mode": "rule"}),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    let token = r["approval"]["approval_token"]
        .as_str()
        .unwrap_or_else(|| panic!("no approval: {r}"))
        .to_string();
    let conversation = r["conversation_id"].as_str().unwrap().to_string();
    let calls = llm.requests().len();

    let (status, e) = post(
        host,
        auth::OPERATOR,
        "/chat",
        json!({"message": "yes", "conversation_id": conversation}),
    )
    .await;
    assert_eq!(status, 403, "{e}");
    assert_eq!(e["error"]["code"], "forbidden", "{e}");
    assert_eq!(order_status(graph, &order).await, "approved", "nothing ran");
    assert_eq!(
        llm.requests().len(),
        calls,
        "the refused turn called no LLM"
    );

    let (status, r) = post(
        host,
        auth::APPROVER,
        "/chat/approve",
        json!({"approval_token": token, "approve": true}),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["actions"]["succeeded"], 1, "{r}");
    assert_eq!(order_status(graph, &order).await, "cancelled");
    assert_eq!(log_actors(graph, "cancel").await, ["approver"]);
}

/// The events of a streamed `/chat/approve` (`Accept: text/event-stream`), each with the
/// milliseconds since the request was sent when its frame arrived.
async fn approve_streamed(host: &AppHost, key: &str, token: &str) -> Vec<(Value, u128)> {
    let started = std::time::Instant::now();
    let mut response = chat_client::approve_streamed(&host.url, key, token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    assert_eq!(response.headers()["cache-control"], "no-store");
    let mut buffer = String::new();
    let mut events = Vec::new();
    while let Some(chunk) = response.chunk().await.unwrap() {
        buffer.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buffer.find("\n\n") {
            let frame: String = buffer.drain(..end + 2).collect();
            if let Some(data) = frame.lines().find_map(|l| l.strip_prefix("data: ")) {
                events.push((
                    serde_json::from_str(data).unwrap(),
                    started.elapsed().as_millis(),
                ));
            }
        }
    }
    events
}

fn types(events: &[(Value, u128)]) -> Vec<&str> {
    events
        .iter()
        .map(|(e, _)| e["type"].as_str().unwrap_or("?"))
        .collect()
}

/// `/chat/approve` with `Accept: text/event-stream` streams the batch as `/chat/stream`
/// does (plan, one progress event per order as it is applied, the report, `done` last);
/// a refusal found once the stream is open is an `error` event with the JSON answer's
/// code, one found before (the approver role) stays a plain JSON 403.
#[tokio::test]
async fn chat_approve_streams_the_batch_when_asked() {
    let llm = ScriptedLlm::start().await;
    llm.then((0..4).map(|_| text("Done.")));
    let stack = Stack::start_with(&llm.variables()).await.unwrap();
    let (host, graph) = (&stack.host, &stack.graph);
    let ids = orders(graph, "approved", 3).await;
    let reason = json!({"reason": "duplicate"});
    let token = token_of(
        &plan(
            host,
            auth::OPERATOR,
            "PurchaseOrder",
            "cancel",
            &ids,
            reason,
        )
        .await,
    );

    // The operator may not approve: refused before any stream opens.
    let response = chat_client::approve_streamed(&host.url, auth::OPERATOR, &token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
    assert_eq!(response.headers()["content-type"], "application/json");
    let e: Value = response.json().await.unwrap();
    assert_eq!(e["error"]["code"], "forbidden", "{e}");

    let events = approve_streamed(host, auth::APPROVER, &token).await;
    let kinds = types(&events);
    assert_eq!(kinds.first(), Some(&"action_plan"), "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"done"), "{kinds:?}");
    assert!(!kinds.contains(&"error"), "{events:?}");
    let progress: Vec<&Value> = events
        .iter()
        .map(|(e, _)| e)
        .filter(|e| e["type"] == "action_progress")
        .collect();
    assert_eq!(progress.len(), 3, "{kinds:?}");
    for (i, p) in progress.iter().enumerate() {
        assert_eq!(p["completed"], i + 1, "{p}");
        assert_eq!(p["total"], 3, "{p}");
    }
    let complete = events
        .iter()
        .find(|(e, _)| e["type"] == "action_complete")
        .map(|(e, _)| e)
        .expect("action_complete");
    assert_eq!(complete["results"]["succeeded"], 3, "{complete}");
    let at = |kind: &str| events.iter().position(|(e, _)| e["type"] == kind).unwrap();
    assert!(at("action_progress") < at("action_complete"), "{kinds:?}");
    for id in &ids {
        assert_eq!(order_status(graph, id).await, "cancelled");
    }
    assert_eq!(log_actors(graph, "cancel").await.len(), 3);

    // Redeemed already: the stream says so with the code the JSON answer carries.
    let again = approve_streamed(host, auth::APPROVER2, &token).await;
    let kinds = types(&again);
    assert_eq!(kinds.last(), Some(&"done"), "{again:?}");
    assert!(!kinds.contains(&"action_progress"), "{again:?}");
    let error = again
        .iter()
        .find(|(e, _)| e["type"] == "error")
        .map(|(e, _)| e)
        .unwrap_or_else(|| panic!("an error event: {again:?}"));
    assert_eq!(error["code"], "approval_used", "{error}");
    // Without the Accept header, the same refusal is the JSON 409.
    let r = post(
        host,
        auth::APPROVER2,
        "/chat/approve",
        json!({"approval_token": token, "approve": true}),
    )
    .await;
    assert_error("JSON after a streamed redemption", &r, 409, "approval_used");
    assert_eq!(count(graph, "MATCH (l:ActionLog) RETURN count(l)").await, 3);
}
