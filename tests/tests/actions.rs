//! The action system end to end: HTTP → dispatcher → action-executor (WIT) → Neo4j Query
//! API → devgraph, asserting on the graph's state before and after, for every demo action
//! and every failure reason.

use kg_e2e::{AppHost, Stack, auth};
use serde_json::{Value, json};
use std::collections::BTreeMap;

async fn post(host: &AppHost, path: &str, body: Value) -> (u16, Value) {
    host.send("POST", path, &body.to_string()).await.unwrap()
}

/// The approval token of a plan (`POST /actions/{action}/plan`, as the admin) that needs one.
async fn plan_token(host: &AppHost, action: &str, body: Value) -> String {
    let (status, r) = post(host, &format!("/actions/{action}/plan"), body).await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["approval_required"], true, "{r}");
    r["approval_token"].as_str().unwrap().to_string()
}

async fn strings(stack: &Stack, statement: &str) -> Vec<String> {
    stack
        .graph
        .query(statement)
        .await
        .unwrap()
        .iter()
        .map(|r| r[0].as_str().unwrap().to_string())
        .collect()
}

async fn number(stack: &Stack, statement: &str) -> f64 {
    stack.graph.query(statement).await.unwrap()[0][0]
        .as_f64()
        .unwrap()
}

fn ids_of(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|o| o["entity_id"].as_str().unwrap().to_string())
        .collect()
}

async fn acme_orders(stack: &Stack) -> Vec<(String, String, f64)> {
    stack
        .graph
        .query(
            "MATCH (o:PurchaseOrder)-[:PLACED_WITH]->(:Supplier {id: 'SUP-001'}) \
             RETURN o.id, o.status, o.amount ORDER BY o.id",
        )
        .await
        .unwrap()
        .iter()
        .map(|r| {
            (
                r[0].as_str().unwrap().to_string(),
                r[1].as_str().unwrap().to_string(),
                r[2].as_f64().unwrap(),
            )
        })
        .collect()
}

#[tokio::test]
async fn the_catalog_is_served_and_unknown_actions_get_suggestions() {
    let stack = Stack::start().await.unwrap();
    let host = &stack.host;
    let (status, list) = host.get("/actions").await.unwrap();
    assert_eq!(status, 200, "{list}");
    let names: Vec<String> = list["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            format!(
                "{}.{}",
                a["entity_type"].as_str().unwrap(),
                a["name"].as_str().unwrap()
            )
        })
        .collect();
    for wanted in [
        "PurchaseOrder.approve",
        "PurchaseOrder.makePayment",
        "PurchaseOrder.cancel",
        "PurchaseOrder.reopen",
        "Supplier.blockSupplier",
    ] {
        assert!(names.contains(&wanted.to_string()), "{names:?}");
    }
    let (_, suppliers) = host.get("/actions?entity_type=Supplier").await.unwrap();
    assert!(
        suppliers["actions"]
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["entity_type"] == "Supplier")
    );
    let (status, e) = host.get("/actions?entity_type=Warehouse").await.unwrap();
    assert_eq!(status, 404, "{e}");

    let (status, spec) = host
        .get("/actions/PurchaseOrder/makePayment")
        .await
        .unwrap();
    assert_eq!(status, 200);
    let checks: Vec<&str> = spec["preconditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["message"].as_str().unwrap())
        .collect();
    assert!(
        checks.contains(&"Insufficient funds") && checks.contains(&"Order already paid"),
        "{checks:?}"
    );
    assert_eq!(spec["requires_approval"], false);

    let (status, e) = host
        .get("/actions/PurchaseOrder/makepayment")
        .await
        .unwrap();
    assert_eq!(status, 404, "{e}");
    assert_eq!(
        e["error"]["detail"]["did_you_mean"][0], "PurchaseOrder/makePayment",
        "{e}"
    );
}

#[tokio::test]
async fn validation_is_a_dry_run_with_a_reason_per_check() {
    let stack = Stack::start().await.unwrap();
    let before = number(&stack, "MATCH (n) RETURN count(n)").await;
    let orders = acme_orders(&stack).await;
    let approved = orders.iter().find(|o| o.1 == "approved").unwrap().0.clone();
    let paid = orders.iter().find(|o| o.1 == "paid").unwrap().0.clone();
    let (status, r) = post(
        &stack.host,
        "/actions/PurchaseOrder/makePayment/validate",
        json!({"entity_ids": [approved, paid, "PO-9999"]}),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["can_execute"], 1);
    let results = r["results"].as_array().unwrap();
    assert_eq!(results[0]["can_execute"], true);
    let failed: Vec<&str> = results[1]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["passed"] == false)
        .map(|c| c["message"].as_str().unwrap())
        .collect();
    assert_eq!(failed, ["Order already paid", "Order is not approved"]);
    assert_eq!(results[2]["found"], false);
    // Not there: one failed `exists` check, not preconditions that cannot apply.
    assert_eq!(
        results[2]["checks"],
        json!([{"name": "exists", "passed": false, "message": "PurchaseOrder `PO-9999` not found"}]),
        "{r}"
    );
    assert_eq!(
        number(&stack, "MATCH (n) RETURN count(n)").await,
        before,
        "a dry run writes nothing"
    );
    assert_eq!(
        strings(
            &stack,
            &format!("MATCH (o:PurchaseOrder {{id: '{approved}'}}) RETURN o.status")
        )
        .await,
        ["approved"]
    );
}

/// Seed 000 §11: pay every order of ACME. The approved ones are paid in id order until the
/// account runs dry; everything else fails with its own reason; the graph agrees.
#[tokio::test]
async fn paying_all_of_acmes_orders_reports_each_success_and_failure_reason() {
    let stack = Stack::start().await.unwrap();
    let orders = acme_orders(&stack).await;
    let mut balance = number(
        &stack,
        "MATCH (a:Account {id: 'ACC-MAIN'}) RETURN a.balance",
    )
    .await;
    let start_balance = balance;
    let mut expected: BTreeMap<String, &str> = BTreeMap::new();
    for (id, status, amount) in &orders {
        let outcome = match status.as_str() {
            "paid" => "Order already paid",
            "cancelled" => "Order is cancelled",
            "draft" => "Order is not approved",
            _ if balance >= *amount => {
                balance -= amount;
                "ok"
            }
            _ => "Insufficient funds",
        };
        expected.insert(id.clone(), outcome);
    }
    let reasons: std::collections::BTreeSet<&str> = expected.values().copied().collect();
    assert_eq!(
        reasons.len(),
        5,
        "the demo data exercises every outcome: {expected:?}"
    );

    let ids: Vec<&String> = orders.iter().map(|o| &o.0).collect();
    let (status, r) = post(
        &stack.host,
        "/actions/PurchaseOrder/makePayment/execute",
        json!({"entity_ids": ids}),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["total"], 24);
    let succeeded: Vec<String> = expected
        .iter()
        .filter(|(_, o)| **o == "ok")
        .map(|(id, _)| id.clone())
        .collect();
    assert_eq!(ids_of(&r["successes"]), succeeded);
    for f in r["failures"].as_array().unwrap() {
        let id = f["entity_id"].as_str().unwrap();
        assert_eq!(f["error"], expected[id], "{f}");
        assert_eq!(f["reason"], "precondition_failed");
    }
    // Before/after values of the first success.
    let first = &r["successes"][0];
    let changes = first["changes"].as_array().unwrap();
    let status_change = changes.iter().find(|c| c["property"] == "status").unwrap();
    assert_eq!(
        (
            status_change["before"].as_str(),
            status_change["after"].as_str()
        ),
        (Some("approved"), Some("paid"))
    );
    let debit = changes.iter().find(|c| c["property"] == "balance").unwrap();
    assert_eq!(debit["entity_id"], "ACC-MAIN");
    assert_eq!(debit["before"].as_f64().unwrap(), start_balance);

    // The graph agrees: statuses, one payment per newly paid order, the balance.
    for id in &succeeded {
        assert_eq!(
            strings(
                &stack,
                &format!("MATCH (o:PurchaseOrder {{id: '{id}'}}) RETURN o.status")
            )
            .await,
            ["paid"]
        );
        assert_eq!(
            number(
                &stack,
                &format!(
                    "MATCH (p:Payment)-[:PAYS]->(:PurchaseOrder {{id: '{id}'}}) RETURN count(p)"
                )
            )
            .await,
            1.0
        );
    }
    let now = number(
        &stack,
        "MATCH (a:Account {id: 'ACC-MAIN'}) RETURN a.balance",
    )
    .await;
    assert!((now - balance).abs() < 1e-6, "{now} vs {balance}");
    assert_eq!(
        number(
            &stack,
            "MATCH (l:ActionLog {action: 'PurchaseOrder.makePayment'}) RETURN count(l)"
        )
        .await as usize,
        succeeded.len()
    );
}

#[tokio::test]
async fn each_demo_action_applies_its_effects_or_says_why_not() {
    let stack = Stack::start().await.unwrap();
    let host = &stack.host;
    let orders = acme_orders(&stack).await;
    let draft = orders.iter().find(|o| o.1 == "draft").unwrap().0.clone();
    let approved = orders.iter().find(|o| o.1 == "approved").unwrap().0.clone();
    let status_of = |id: String| {
        let stack = &stack;
        async move {
            strings(
                stack,
                &format!("MATCH (o:PurchaseOrder {{id: '{id}'}}) RETURN o.status"),
            )
            .await[0]
                .clone()
        }
    };

    // approve: draft → approved, the approver recorded; twice → "Only a draft…". The
    // approver recorded is the authenticated caller (`caller()` in the catalog): a request
    // cannot name anyone else, as it could when `approver` was a parameter.
    let (status, r) = post(
        host,
        "/actions/PurchaseOrder/approve/execute",
        json!({"entity_ids": [draft], "parameters": {"approver": "alice"}}),
    )
    .await;
    assert_eq!(status, 400, "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("unknown parameter `approver`")),
        "{r}"
    );
    assert_eq!(status_of(draft.clone()).await, "draft");
    let (status, r) = host
        .send_as(
            Some(auth::OPERATOR),
            "POST",
            "/actions/PurchaseOrder/approve/execute",
            &json!({"entity_ids": [draft]}).to_string(),
        )
        .await
        .unwrap();
    assert_eq!((status, r["succeeded"].as_u64()), (200, Some(1)), "{r}");
    assert_eq!(status_of(draft.clone()).await, "approved");
    assert_eq!(
        strings(
            &stack,
            &format!("MATCH (o:PurchaseOrder {{id: '{draft}'}}) RETURN o.approved_by")
        )
        .await,
        ["operator"]
    );
    let (_, r) = post(
        host,
        "/actions/PurchaseOrder/approve/execute",
        json!({"entity_ids": [draft]}),
    )
    .await;
    assert_eq!(
        r["failures"][0]["error"],
        "Only a draft order can be approved"
    );

    // cancel needs approval (from another subject: four-eyes), and a reason.
    let (status, e) = post(
        host,
        "/actions/PurchaseOrder/cancel/execute",
        json!({"entity_ids": [approved], "parameters": {"reason": "dup"}}),
    )
    .await;
    assert_eq!(status, 403, "{e}");
    assert_eq!(e["error"]["code"], "approval_required", "{e}");
    let (status, e) = post(
        host,
        "/actions/PurchaseOrder/cancel/plan",
        json!({"entity_ids": [approved]}),
    )
    .await;
    assert_eq!(status, 400, "{e}");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`reason` is required"),
        "{e}"
    );
    let token = plan_token(
        host,
        "PurchaseOrder/cancel",
        json!({"entity_ids": [approved], "parameters": {"reason": "duplicate"}}),
    )
    .await;
    let (status, r) = host
        .send_as(
            Some(auth::APPROVER),
            "POST",
            "/actions/PurchaseOrder/cancel/execute",
            &json!({"entity_ids": [approved], "approval_token": token, "parameters": {"reason": "duplicate"}}).to_string(),
        )
        .await
        .unwrap();
    assert_eq!((status, r["succeeded"].as_u64()), (200, Some(1)), "{r}");
    assert_eq!(status_of(approved.clone()).await, "cancelled");
    let (_, r) = post(
        host,
        "/actions/PurchaseOrder/makePayment/execute",
        json!({"entity_ids": [approved]}),
    )
    .await;
    assert_eq!(r["failures"][0]["error"], "Order is cancelled");

    // reopen: cancelled → draft, the reason removed.
    let (_, r) = post(
        host,
        "/actions/PurchaseOrder/reopen/execute",
        json!({"entity_ids": [approved]}),
    )
    .await;
    assert_eq!(r["succeeded"], 1, "{r}");
    assert_eq!(status_of(approved.clone()).await, "draft");
    assert!(
        stack
            .graph
            .query(&format!(
                "MATCH (o:PurchaseOrder {{id: '{approved}'}}) RETURN o.cancel_reason"
            ))
            .await
            .unwrap()[0][0]
            .is_null()
    );

    // blockSupplier: then that supplier's orders can be neither approved nor paid.
    let block = json!({"entity_ids": ["SUP-001", "SUP-007"], "parameters": {"reason": "audit"}});
    let mut approved_block = block.clone();
    approved_block["approval_token"] =
        json!(plan_token(host, "Supplier/blockSupplier", block).await);
    let (_, r) = post(
        host,
        "/actions/Supplier/blockSupplier/execute",
        approved_block,
    )
    .await;
    assert_eq!(ids_of(&r["successes"]), ["SUP-001"]);
    assert_eq!(r["failures"][0]["error"], "Supplier is already blocked");
    let (_, r) = post(
        host,
        "/actions/PurchaseOrder/approve/execute",
        json!({"entity_ids": [approved]}),
    )
    .await;
    assert_eq!(r["failures"][0]["error"], "Supplier is blocked");
    let still_approved = orders
        .iter()
        .filter(|o| o.1 == "approved")
        .nth(1)
        .unwrap()
        .0
        .clone();
    let (_, r) = post(
        host,
        "/actions/PurchaseOrder/makePayment/execute",
        json!({"entity_ids": [still_approved]}),
    )
    .await;
    assert_eq!(r["failures"][0]["error"], "Supplier is blocked");

    // Unknown ids fail alone; duplicates run once.
    let unblock = json!({"entity_ids": ["SUP-001", "SUP-001", "SUP-404"]});
    let mut approved_unblock = unblock.clone();
    approved_unblock["approval_token"] =
        json!(plan_token(host, "Supplier/unblockSupplier", unblock).await);
    let (_, r) = post(
        host,
        "/actions/Supplier/unblockSupplier/execute",
        approved_unblock,
    )
    .await;
    assert_eq!(r["total"], 2, "{r}");
    assert_eq!(ids_of(&r["successes"]), ["SUP-001"]);
    assert_eq!(r["failures"][0]["reason"], "not_found");
    assert_eq!(r["failures"][0]["error"], "Supplier `SUP-404` not found");
}

#[tokio::test]
async fn a_repeated_idempotency_key_replays_and_writes_nothing() {
    let stack = Stack::start().await.unwrap();
    let orders = acme_orders(&stack).await;
    let approved: Vec<String> = orders
        .iter()
        .filter(|o| o.1 == "approved")
        .take(3)
        .map(|o| o.0.clone())
        .collect();
    let body = json!({"entity_ids": approved, "idempotency_key": "pay-batch-1"});
    let (_, first) = post(
        &stack.host,
        "/actions/PurchaseOrder/makePayment/execute",
        body.clone(),
    )
    .await;
    assert_eq!(first["succeeded"], 3, "{first}");
    let balance = number(
        &stack,
        "MATCH (a:Account {id: 'ACC-MAIN'}) RETURN a.balance",
    )
    .await;
    let nodes = number(&stack, "MATCH (n) RETURN count(n)").await;

    let (status, again) = post(
        &stack.host,
        "/actions/PurchaseOrder/makePayment/execute",
        body,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(again["succeeded"], 3, "{again}");
    for (a, b) in again["successes"]
        .as_array()
        .unwrap()
        .iter()
        .zip(first["successes"].as_array().unwrap())
    {
        assert_eq!(a["replayed"], true);
        assert_eq!(a["log_id"], b["log_id"]);
        assert_eq!(a["changes"], b["changes"], "the recorded outcome");
    }
    assert_eq!(
        number(
            &stack,
            "MATCH (a:Account {id: 'ACC-MAIN'}) RETURN a.balance"
        )
        .await,
        balance
    );
    assert_eq!(number(&stack, "MATCH (n) RETURN count(n)").await, nodes);

    // The same key as a header.
    let response = reqwest::Client::new()
        .post(format!(
            "{}/actions/PurchaseOrder/makePayment/execute",
            stack.host.url
        ))
        .bearer_auth(auth::ADMIN)
        .header("idempotency-key", "pay-batch-1")
        .body(json!({"entity_ids": [approved[0]]}).to_string())
        .send()
        .await
        .unwrap();
    let r: Value = response.json().await.unwrap();
    assert_eq!(r["successes"][0]["replayed"], true, "{r}");
}

/// A key repeated after its action was undone answers with the current truth: not a
/// success (the order is not paid), a `conflict` failure marked undone, with who undid it
/// and when, saying how to pay again; nothing runs again — until a new key asks.
#[tokio::test]
async fn a_replay_after_undo_says_the_change_was_undone() {
    let stack = Stack::start().await.unwrap();
    let orders = acme_orders(&stack).await;
    let order = orders.iter().find(|o| o.1 == "approved").unwrap().0.clone();
    let body = json!({"entity_ids": [order], "idempotency_key": "pay-then-undo"});
    let path = "/actions/PurchaseOrder/makePayment/execute";
    let (_, first) = post(&stack.host, path, body.clone()).await;
    assert_eq!(first["succeeded"], 1, "{first}");
    assert!(first["successes"][0].get("undone").is_none(), "{first}");
    let log_id = first["successes"][0]["log_id"]
        .as_str()
        .unwrap()
        .to_string();
    let (status, undo) = post(
        &stack.host,
        &format!("/actions/log/{log_id}/undo"),
        json!({}),
    )
    .await;
    assert_eq!(status, 200, "{undo}");

    let (status, again) = post(&stack.host, path, body).await;
    assert_eq!(status, 200, "{again}");
    assert_eq!(
        (again["succeeded"].as_u64(), again["failed"].as_u64()),
        (Some(0), Some(1)),
        "{again}"
    );
    let replay = &again["failures"][0];
    assert_eq!(replay["success"], false, "{again}");
    assert_eq!(replay["reason"], "conflict", "{again}");
    assert!(
        replay["error"].as_str().is_some_and(
            |m| m.contains("was undone by admin") && m.contains("send a new idempotency_key")
        ),
        "{again}"
    );
    assert_eq!(replay["log_id"], log_id.as_str(), "{again}");
    assert_eq!(replay["replayed"], true, "{again}");
    assert_eq!(replay["undone"], true, "{again}");
    assert_eq!(replay["undone_by"], "admin", "{again}");
    assert_eq!(replay["undo_log_id"], undo["log_id"], "{again}");
    assert!(
        replay["undone_at"].as_str().is_some_and(|t| t.len() >= 20),
        "{again}"
    );
    assert_eq!(
        strings(
            &stack,
            &format!("MATCH (o:PurchaseOrder {{id: '{order}'}}) RETURN o.status")
        )
        .await,
        ["approved"],
        "the replay did not pay again"
    );

    // As the message says: a new key pays again.
    let (status, repaid) = post(
        &stack.host,
        path,
        json!({"entity_ids": [order], "idempotency_key": "pay-again"}),
    )
    .await;
    assert_eq!(
        (status, repaid["succeeded"].as_u64()),
        (200, Some(1)),
        "{repaid}"
    );
    assert_eq!(
        strings(
            &stack,
            &format!("MATCH (o:PurchaseOrder {{id: '{order}'}}) RETURN o.status")
        )
        .await,
        ["paid"]
    );
}

#[tokio::test]
async fn the_log_pages_and_undo_reverts_only_unchanged_entities() {
    let stack = Stack::start().await.unwrap();
    let host = &stack.host;
    let orders = acme_orders(&stack).await;
    let approved: Vec<String> = orders
        .iter()
        .filter(|o| o.1 == "approved")
        .take(3)
        .map(|o| o.0.clone())
        .collect();
    let balance = number(
        &stack,
        "MATCH (a:Account {id: 'ACC-MAIN'}) RETURN a.balance",
    )
    .await;
    let (_, r) = post(
        host,
        "/actions/PurchaseOrder/makePayment/execute",
        // The actor is the authenticated subject; a body may only repeat it.
        json!({"entity_ids": approved, "actor": "admin"}),
    )
    .await;
    assert_eq!(r["succeeded"], 3, "{r}");

    // Two pages of two, newest first, then one.
    let (status, page) = host.get("/actions/log?limit=2").await.unwrap();
    assert_eq!(status, 200, "{page}");
    assert_eq!(page["entries"].as_array().unwrap().len(), 2);
    let cursor = page["next_cursor"].as_str().unwrap().to_string();
    let (_, rest) = host
        .get(&format!(
            "/actions/log?limit=2&cursor={}",
            cursor.replace('|', "%7C")
        ))
        .await
        .unwrap();
    assert_eq!(rest["entries"].as_array().unwrap().len(), 1, "{rest}");
    assert!(rest["next_cursor"].is_null());
    let entry = &rest["entries"][0];
    assert_eq!(entry["actor"], "admin");
    assert_eq!(entry["action_name"], "makePayment");
    let (status, _) = host.get("/actions/log?limit=0").await.unwrap();
    assert_eq!(status, 400);

    // Undo one payment: status, balance and the Payment node come back.
    let log_id = r["successes"][0]["log_id"].as_str().unwrap().to_string();
    let order = r["successes"][0]["entity_id"].as_str().unwrap().to_string();
    let amount = orders.iter().find(|o| o.0 == order).unwrap().2;
    let (status, undone) = post(
        host,
        &format!("/actions/log/{log_id}/undo"),
        json!({"actor": "admin"}),
    )
    .await;
    assert_eq!(status, 200, "{undone}");
    assert_eq!(
        strings(
            &stack,
            &format!("MATCH (o:PurchaseOrder {{id: '{order}'}}) RETURN o.status")
        )
        .await,
        ["approved"]
    );
    assert_eq!(
        number(
            &stack,
            &format!(
                "MATCH (p:Payment)-[:PAYS]->(:PurchaseOrder {{id: '{order}'}}) RETURN count(p)"
            )
        )
        .await,
        0.0
    );
    let others: f64 = orders
        .iter()
        .filter(|o| approved[1..].contains(&o.0))
        .map(|o| o.2)
        .sum();
    let now = number(
        &stack,
        "MATCH (a:Account {id: 'ACC-MAIN'}) RETURN a.balance",
    )
    .await;
    assert!(
        (now - (balance - others)).abs() < 1e-6,
        "the balance restores {amount} even though other payments moved it: {now}"
    );
    let (status, _) = post(host, &format!("/actions/log/{log_id}/undo"), json!({})).await;
    assert_eq!(status, 409, "an entry is undone once");

    // An entity changed since its action cannot be undone.
    let second = r["successes"][1]["log_id"].as_str().unwrap().to_string();
    let changed = r["successes"][1]["entity_id"].as_str().unwrap().to_string();
    stack
        .graph
        .write(&format!(
            "MATCH (o:PurchaseOrder {{id: '{changed}'}}) SET o.status = 'disputed'"
        ))
        .await
        .unwrap();
    let (status, e) = post(host, &format!("/actions/log/{second}/undo"), json!({})).await;
    assert_eq!(status, 409, "{e}");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("changed since"),
        "{e}"
    );
    let (status, _) = post(host, "/actions/log/LOG-nope/undo", json!({})).await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn a_streamed_batch_emits_plan_progress_errors_complete_then_done() {
    let stack = Stack::start().await.unwrap();
    let orders = acme_orders(&stack).await;
    let ids: Vec<&String> = orders.iter().map(|o| &o.0).collect();
    let response = reqwest::Client::new()
        .post(format!(
            "{}/actions/PurchaseOrder/makePayment/execute",
            stack.host.url
        ))
        .bearer_auth(auth::ADMIN)
        .header("accept", "text/event-stream")
        .body(
            json!({"entity_ids": ids, "options": {"chunk_size": 5, "max_concurrent": 3}})
                .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let text = response.text().await.unwrap();
    let events: Vec<Value> = text
        .split("\n\n")
        .filter_map(|frame| frame.lines().find_map(|l| l.strip_prefix("data: ")))
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(kinds.first(), Some(&"action_plan"), "{kinds:?}");
    assert_eq!(events[0]["plan"]["target_count"], 24);
    assert_eq!(&kinds[kinds.len() - 2..], ["action_complete", "done"]);
    let progress: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "action_progress")
        .collect();
    assert_eq!(progress.len(), 24);
    let completed: Vec<u64> = progress
        .iter()
        .map(|p| p["completed"].as_u64().unwrap())
        .collect();
    assert_eq!(completed, (1..=24).collect::<Vec<_>>());
    // Every failed progress event is followed by its action_error.
    for (i, e) in events.iter().enumerate() {
        if e["type"] == "action_progress" && e["success"] == false {
            assert_eq!(events[i + 1]["type"], "action_error");
            assert_eq!(events[i + 1]["entity_id"], e["entity_id"]);
        }
    }
    let summary = &events[events.len() - 2]["results"];
    let failures = kinds.iter().filter(|k| **k == "action_error").count() as u64;
    assert_eq!(summary["failed"].as_u64(), Some(failures));
    assert_eq!(summary["succeeded"].as_u64().unwrap() + failures, 24);
}

#[tokio::test]
async fn bad_requests_are_refused_before_the_graph_is_touched() {
    let stack = Stack::start().await.unwrap();
    let host = &stack.host;
    let path = "/actions/PurchaseOrder/makePayment/execute";
    for (body, needle) in [
        (json!({}), "`entity_ids` is required"),
        (json!({"entity_ids": []}), "at least one entity"),
        (json!({"entity_ids": "PO-0001"}), "array of strings"),
        (
            json!({"entity_ids": ["PO-0001"], "parameters": {"reference": 5}}),
            "parameter `reference`: must be a string",
        ),
        (
            json!({"entity_ids": ["PO-0001"], "parameters": {"amount": 5}}),
            "unknown parameter `amount`",
        ),
        (
            json!({"entity_ids": ["PO-0001"], "options": {"max_concurrent": 0}}),
            "`max_concurrent` must be from 1",
        ),
        (
            json!({"entity_ids": ["x".repeat(300)]}),
            "every id must be 1 to 200 bytes",
        ),
        (
            json!({"entity_ids": ["PO-0001"], "idempotency_key": ""}),
            "`idempotency_key`",
        ),
    ] {
        let (status, e) = post(host, path, body.clone()).await;
        assert_eq!(status, 400, "{body} → {e}");
        assert!(
            e["error"]["message"].as_str().unwrap().contains(needle),
            "{body} → {e}"
        );
    }
    let many: Vec<String> = (0..10_001).map(|i| format!("PO-{i}")).collect();
    let (status, e) = post(host, path, json!({"entity_ids": many})).await;
    assert_eq!(status, 400, "{e}");
    assert_eq!(
        number(&stack, "MATCH (l:ActionLog) RETURN count(l)").await,
        0.0
    );
}

#[tokio::test]
async fn setup_creates_the_lookup_indexes_and_unique_keys_once() {
    let stack = Stack::start().await.unwrap();
    let (status, r) = post(&stack.host, "/actions/setup", json!({})).await;
    assert_eq!(status, 200, "{r}");
    let statements = r["indexes"].as_array().unwrap();
    assert!(statements.iter().any(|s| {
        s.as_str()
            .unwrap()
            .contains("FOR (n:`ActionLog`) REQUIRE n.`execution_key` IS UNIQUE")
    }));
    let keys: Vec<String> = stack
        .graph
        .query("SHOW CONSTRAINTS YIELD labelsOrTypes, properties RETURN labelsOrTypes, properties")
        .await
        .unwrap()
        .iter()
        .map(|r| {
            format!(
                "{}.{}",
                r[0][0].as_str().unwrap(),
                r[1][0].as_str().unwrap()
            )
        })
        .collect();
    for wanted in [
        "ActionApproval.id",
        "ActionLog.execution_key",
        "ActionLog.id",
    ] {
        assert!(keys.contains(&wanted.to_string()), "{keys:?}");
    }
    let indexes = stack
        .graph
        .query("SHOW INDEXES YIELD labelsOrTypes, properties RETURN labelsOrTypes, properties")
        .await
        .unwrap();
    // Token-lookup indexes have neither (null).
    let on: Vec<(String, String)> = indexes
        .iter()
        .filter_map(|r| Some((r[0][0].as_str()?.to_string(), r[1][0].as_str()?.to_string())))
        .collect();
    for wanted in [("PurchaseOrder", "id"), ("Supplier", "id")] {
        assert!(
            on.contains(&(wanted.0.to_string(), wanted.1.to_string())),
            "{on:?}"
        );
    }
    let (status, again) = post(&stack.host, "/actions/setup", json!({})).await;
    assert_eq!((status, again), (200, r), "idempotent");
    assert_eq!(
        stack.graph.query("SHOW INDEXES").await.unwrap().len(),
        indexes.len()
    );
}

/// The catalog is read from the `files` mount: another catalog there changes the actions
/// the service offers, without a rebuild.
#[tokio::test]
async fn the_catalog_comes_from_the_files_mount() {
    let graph = kg_e2e::Graph::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    // Inside the manifest's folder (Spin mounts nothing from outside it).
    let mounted = dir.path().join("cut-catalog");
    std::fs::create_dir(&mounted).unwrap();
    let full = std::fs::read_to_string(kg_e2e::workspace().join("catalog/actions.toml")).unwrap();
    // Keep the entity declarations and only the first action (approve).
    let cut = full.match_indices("[[actions]]").nth(1).unwrap().0;
    std::fs::write(mounted.join("actions.toml"), &full[..cut]).unwrap();
    let manifest = kg_e2e::manifest_variant(dir.path(), |text| {
        text.replace("source = \"catalog\"", "source = \"cut-catalog\"")
    })
    .unwrap();
    let host = AppHost::start(&manifest, &dir.path().join("kv.db"), &graph.variables())
        .await
        .unwrap();
    let (_, list) = host.get("/actions").await.unwrap();
    let names: Vec<&str> = list["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["approve"]);
    let (_, health) = host.get("/health").await.unwrap();
    assert!(
        health.to_string().contains("from /catalog/actions.toml"),
        "{health}"
    );
}
