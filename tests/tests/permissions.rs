//! Roles and permissions over real HTTP (issue #13): each role against one route of every
//! route family (403 naming the missing permission), the actor is the authenticated
//! subject, conversations belong to their subject, the catalog narrows who runs an action
//! and how many entities per request, and no prompt makes the agent act for a viewer.

use kg_e2e::llm_stub::{ScriptedLlm, call, text};
use kg_e2e::{Stack, auth};
use serde_json::{Value, json};

async fn stack_with_llm(llm: &ScriptedLlm) -> Stack {
    Stack::start_with(&llm.variables()).await.unwrap()
}

async fn send(stack: &Stack, key: &str, method: &str, path: &str, body: Value) -> (u16, Value) {
    let body = if body.is_null() {
        String::new()
    } else {
        body.to_string()
    };
    stack
        .host
        .send_as(Some(key), method, path, &body)
        .await
        .unwrap()
}

#[derive(Debug, Clone, Copy)]
enum Expect {
    /// Exactly this status.
    Status(u16),
    /// Let through: neither 401 nor 403 (the handler may still fail for its own reasons,
    /// e.g. search without any index or embeddings endpoint answers 503).
    Allowed,
    /// Let through to the handler, which may refuse for its own reasons (not `forbidden`).
    NotForbidden,
    /// 403 `forbidden` naming this permission.
    Forbidden(&'static str),
}

/// Whether an answer is what `expect` says.
fn meets(status: u16, body: &Value, expect: Expect) -> bool {
    match expect {
        Expect::Status(s) => status == s,
        Expect::Allowed => status != 401 && status != 403,
        Expect::NotForbidden => {
            status != 401 && body["error"]["code"] != "forbidden" && status < 500
        }
        Expect::Forbidden(permission) => is_forbidden(status, body, permission),
    }
}

/// A 403 `forbidden` whose message and detail name `permission`.
fn is_forbidden(status: u16, body: &Value, permission: &str) -> bool {
    let message = body["error"]["message"].as_str().unwrap_or_default();
    status == 403
        && body["error"]["code"] == "forbidden"
        && message.contains(&format!("missing permission `{permission}`"))
        && body["error"]["detail"]["permission"] == permission
}

#[tokio::test]
async fn each_role_gets_exactly_what_the_matrix_grants_on_every_route_family() {
    use Expect::*;
    let llm = ScriptedLlm::start().await;
    llm.then((0..10).map(|_| text("Hello.")));
    let stack = stack_with_llm(&llm).await;
    let ids = json!({"entity_ids": ["PO-9999"]});
    let chat = json!({"message": "hello", "routing_mode": "rule"});
    let approve = json!({"approval_token": "no-such-token", "approve": true});
    let document = json!({"id": "perm-doc", "title": "Policy", "text": "Orders above 5,000 EUR need the controller."});
    let validate = "/actions/PurchaseOrder/makePayment/validate";
    let plan = "/actions/PurchaseOrder/makePayment/plan";
    let execute = "/actions/PurchaseOrder/makePayment/execute";
    let cases: Vec<(&str, &str, &str, Value, Expect)> = vec![
        // viewer: chat, query tools, search, the catalog; nothing that changes anything.
        (auth::VIEWER, "GET", "/health", Value::Null, Status(200)),
        (auth::VIEWER, "GET", "/tools", Value::Null, Status(200)),
        (
            auth::VIEWER,
            "POST",
            "/tools/get_node_statistics",
            json!({"label": "Supplier"}),
            Status(200),
        ),
        (auth::VIEWER, "GET", "/documents", Value::Null, Allowed),
        (
            auth::VIEWER,
            "POST",
            "/search",
            json!({"query": "orders"}),
            Allowed,
        ),
        (auth::VIEWER, "GET", "/actions", Value::Null, Status(200)),
        (
            auth::VIEWER,
            "GET",
            "/actions/PurchaseOrder/makePayment",
            Value::Null,
            Status(200),
        ),
        (auth::VIEWER, "POST", "/chat", chat.clone(), Status(200)),
        (
            auth::VIEWER,
            "GET",
            "/actions/log",
            Value::Null,
            Forbidden("actions:log"),
        ),
        (
            auth::VIEWER,
            "POST",
            validate,
            ids.clone(),
            Forbidden("actions:execute"),
        ),
        (
            auth::VIEWER,
            "POST",
            plan,
            ids.clone(),
            Forbidden("actions:execute"),
        ),
        (
            auth::VIEWER,
            "POST",
            execute,
            ids.clone(),
            Forbidden("actions:execute"),
        ),
        (
            auth::VIEWER,
            "POST",
            "/chat/approve",
            approve.clone(),
            Forbidden("actions:approve"),
        ),
        (
            auth::VIEWER,
            "POST",
            "/actions/setup",
            json!({}),
            Forbidden("actions:setup"),
        ),
        (
            auth::VIEWER,
            "POST",
            "/actions/log/LOG-1/undo",
            json!({}),
            Forbidden("actions:undo"),
        ),
        (
            auth::VIEWER,
            "POST",
            "/documents",
            document.clone(),
            Forbidden("documents:write"),
        ),
        (
            auth::VIEWER,
            "DELETE",
            "/documents/x",
            Value::Null,
            Forbidden("documents:write"),
        ),
        // operator: plus validate, plan, execute and the log; no approving, undo, setup or ingest.
        (auth::OPERATOR, "GET", "/tools", Value::Null, Status(200)),
        (auth::OPERATOR, "POST", "/chat", chat.clone(), Status(200)),
        (
            auth::OPERATOR,
            "GET",
            "/actions/log",
            Value::Null,
            Status(200),
        ),
        (auth::OPERATOR, "POST", validate, ids.clone(), Status(200)),
        (auth::OPERATOR, "POST", plan, ids.clone(), Status(200)),
        (auth::OPERATOR, "POST", execute, ids.clone(), Status(200)),
        (
            auth::OPERATOR,
            "POST",
            "/chat/approve",
            approve.clone(),
            Forbidden("actions:approve"),
        ),
        (
            auth::OPERATOR,
            "POST",
            "/actions/setup",
            json!({}),
            Forbidden("actions:setup"),
        ),
        (
            auth::OPERATOR,
            "POST",
            "/actions/log/LOG-1/undo",
            json!({}),
            Forbidden("actions:undo"),
        ),
        (
            auth::OPERATOR,
            "POST",
            "/documents",
            document.clone(),
            Forbidden("documents:write"),
        ),
        (
            auth::OPERATOR,
            "DELETE",
            "/documents/x",
            Value::Null,
            Forbidden("documents:write"),
        ),
        // approver: approves (the handler then finds no such token), executes nothing itself.
        (auth::APPROVER, "GET", "/tools", Value::Null, Status(200)),
        (
            auth::APPROVER,
            "POST",
            "/chat/approve",
            approve.clone(),
            NotForbidden,
        ),
        (
            auth::APPROVER,
            "POST",
            validate,
            ids.clone(),
            Forbidden("actions:execute"),
        ),
        (
            auth::APPROVER,
            "POST",
            "/actions/setup",
            json!({}),
            Forbidden("actions:setup"),
        ),
        (
            auth::APPROVER,
            "POST",
            "/documents",
            document.clone(),
            Forbidden("documents:write"),
        ),
        // admin: everything.
        (auth::ADMIN, "GET", "/actions/log", Value::Null, Status(200)),
        (auth::ADMIN, "POST", validate, ids.clone(), Status(200)),
        (auth::ADMIN, "POST", plan, ids.clone(), Status(200)),
        (auth::ADMIN, "POST", execute, ids.clone(), Status(200)),
        (
            auth::ADMIN,
            "POST",
            "/chat/approve",
            approve.clone(),
            NotForbidden,
        ),
        (
            auth::ADMIN,
            "POST",
            "/actions/setup",
            json!({}),
            Status(200),
        ),
        (
            auth::ADMIN,
            "POST",
            "/actions/log/LOG-1/undo",
            json!({}),
            Status(404),
        ),
        (auth::ADMIN, "POST", "/documents", document.clone(), Allowed),
        (
            auth::ADMIN,
            "DELETE",
            "/documents/perm-doc",
            Value::Null,
            Allowed,
        ),
        (auth::ADMIN, "DELETE", "/documents/x", Value::Null, Allowed),
        (auth::ADMIN, "POST", "/chat", chat.clone(), Status(200)),
    ];
    let subject = |key: &str| {
        auth::KEYS
            .iter()
            .find(|k| k.key == key)
            .map(|k| k.subject)
            .unwrap()
    };
    // Every case is tried, then every departure reported at once.
    let mut wrong = Vec::new();
    for (key, method, path, body, expect) in cases {
        let what = format!("{} {method} {path} {body}", subject(key));
        let (status, answer) = send(&stack, key, method, path, body).await;
        if !meets(status, &answer, expect) {
            wrong.push(format!(
                "{what}: expected {expect:?}, got {status} {answer}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // Nothing a refused request asked for happened.
    let logs = stack
        .graph
        .query("MATCH (l:ActionLog) RETURN count(l)")
        .await
        .unwrap();
    assert_eq!(logs[0][0], 0);
}

#[tokio::test]
async fn the_actor_is_always_the_authenticated_subject() {
    let stack = Stack::start().await.unwrap();
    let drafts: Vec<String> = stack
        .graph
        .query("MATCH (o:PurchaseOrder {status: 'draft'})-[:PLACED_WITH]->(:Supplier {blocked: false}) RETURN o.id ORDER BY o.id LIMIT 3")
        .await
        .unwrap()
        .iter()
        .map(|r| r[0].as_str().unwrap().to_string())
        .collect();
    assert_eq!(drafts.len(), 3);
    let path = "/actions/PurchaseOrder/approve/execute";

    let (status, e) = send(
        &stack,
        auth::OPERATOR,
        "POST",
        path,
        json!({"entity_ids": [drafts[0]], "actor": "someone-else"}),
    )
    .await;
    assert_eq!(status, 400, "{e}");
    assert_eq!(e["error"]["code"], "actor_mismatch", "{e}");
    let status_of = |id: String| {
        let stack = &stack;
        async move {
            stack
                .graph
                .query(&format!(
                    "MATCH (o:PurchaseOrder {{id: '{id}'}}) RETURN o.status"
                ))
                .await
                .unwrap()[0][0]
                .clone()
        }
    };
    assert_eq!(
        status_of(drafts[0].clone()).await,
        "draft",
        "a refused request ran nothing"
    );

    // Repeating one's own subject is accepted; leaving it out too.
    let (status, r) = send(
        &stack,
        auth::OPERATOR,
        "POST",
        path,
        json!({"entity_ids": [drafts[0]], "actor": "operator"}),
    )
    .await;
    assert_eq!((status, r["succeeded"].as_u64()), (200, Some(1)), "{r}");
    let (status, r) = send(
        &stack,
        auth::OPAPPROVER,
        "POST",
        path,
        json!({"entity_ids": [drafts[1]]}),
    )
    .await;
    assert_eq!((status, r["succeeded"].as_u64()), (200, Some(1)), "{r}");

    let (status, page) = send(&stack, auth::ADMIN, "GET", "/actions/log", Value::Null).await;
    assert_eq!(status, 200, "{page}");
    let actor_of = |id: &str| {
        page["entries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["entity_id"] == id)
            .unwrap_or_else(|| panic!("no log entry for {id}: {page}"))["actor"]
            .clone()
    };
    assert_eq!(actor_of(&drafts[0]), "operator");
    assert_eq!(actor_of(&drafts[1]), "opapprover");
    // The graph's own record agrees.
    let actors = stack
        .graph
        .query("MATCH (l:ActionLog) RETURN l.actor ORDER BY l.actor")
        .await
        .unwrap();
    assert_eq!(actors, vec![json!(["opapprover"]), json!(["operator"])]);
}

#[tokio::test]
async fn a_conversation_is_visible_to_its_subject_and_admins_only() {
    let llm = ScriptedLlm::start().await;
    llm.then([text("Hello, viewer."), text("Hello again.")]);
    let stack = stack_with_llm(&llm).await;
    let (status, r) = send(
        &stack,
        auth::VIEWER,
        "POST",
        "/chat",
        json!({"message": "hello", "routing_mode": "rule"}),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    let id = r["conversation_id"].as_str().unwrap().to_string();
    let path = format!("/conversations/{id}");
    let missing_id = "z".repeat(id.len());
    let (status, missing) = send(
        &stack,
        auth::OPERATOR,
        "GET",
        &format!("/conversations/{missing_id}"),
        Value::Null,
    )
    .await;
    assert_eq!(status, 404, "{missing}");
    // Someone else's conversation looks exactly like one that does not exist.
    let same_as_missing = |body: &Value| {
        let text = body.to_string().replace(&id, &missing_id);
        assert_eq!(
            serde_json::from_str::<Value>(&text).unwrap(),
            missing,
            "{body}"
        );
    };
    let (status, e) = send(&stack, auth::OPERATOR, "GET", &path, Value::Null).await;
    assert_eq!(status, 404, "{e}");
    assert_eq!(e["error"]["code"], "not_found");
    same_as_missing(&e);
    let (status, e) = send(&stack, auth::OPERATOR, "DELETE", &path, Value::Null).await;
    assert_eq!(status, 404, "{e}");
    assert_eq!(e["error"]["code"], "not_found");
    let calls_before = llm.requests().len();
    let (status, e) = send(
        &stack,
        auth::OPERATOR,
        "POST",
        "/chat",
        json!({"message": "what did they ask?", "conversation_id": id, "routing_mode": "rule"}),
    )
    .await;
    assert_eq!(status, 404, "{e}");
    assert_eq!(e["error"]["code"], "not_found");
    // The stream refuses it the same way, before it opens (not a 200 with an error event).
    let (status, streamed) = send(
        &stack,
        auth::OPERATOR,
        "POST",
        "/chat/stream",
        json!({"message": "what did they ask?", "conversation_id": id, "routing_mode": "rule"}),
    )
    .await;
    assert_eq!((status, &streamed), (404, &e));
    assert_eq!(
        llm.requests().len(),
        calls_before,
        "a refused turn never reaches the LLM"
    );

    // The owner and admins read it; the operator's attempts changed nothing.
    let (status, c) = send(&stack, auth::ADMIN, "GET", &path, Value::Null).await;
    assert_eq!(status, 200, "{c}");
    let (status, c) = send(&stack, auth::VIEWER, "GET", &path, Value::Null).await;
    assert_eq!(status, 200, "{c}");
    let contents: Vec<&str> = c["turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["content"].as_str().unwrap())
        .collect();
    assert_eq!(contents, ["hello", "Hello, viewer."]);
    let (status, _) = send(&stack, auth::VIEWER, "DELETE", &path, Value::Null).await;
    assert_eq!(status, 200);
    let (status, _) = send(&stack, auth::VIEWER, "GET", &path, Value::Null).await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn the_catalog_narrows_who_runs_an_action_and_how_many_at_once() {
    let stack = Stack::start().await.unwrap();
    for (action, id, parameters) in [
        ("blockSupplier", "SUP-002", json!({"reason": "audit"})),
        ("unblockSupplier", "SUP-007", json!({})),
    ] {
        for step in ["plan", "execute"] {
            let path = format!("/actions/Supplier/{action}/{step}");
            let body = json!({"entity_ids": [id], "parameters": parameters});
            let (status, e) = send(&stack, auth::OPERATOR, "POST", &path, body).await;
            assert_eq!(status, 403, "operator {path}: {e}");
            assert_eq!(e["error"]["code"], "forbidden", "{path}: {e}");
        }
        // An admin may plan it (it then waits for approval).
        let (status, r) = send(
            &stack,
            auth::ADMIN,
            "POST",
            &format!("/actions/Supplier/{action}/plan"),
            json!({"entity_ids": [id], "parameters": parameters}),
        )
        .await;
        assert_eq!(status, 200, "{r}");
        assert_eq!(r["approval_required"], true, "{r}");
    }

    let ids = |n: usize| -> Vec<String> { (1..=n).map(|i| format!("PO-{i:04}")).collect() };
    for step in ["plan", "execute"] {
        let path = format!("/actions/PurchaseOrder/makePayment/{step}");
        let (status, e) = send(
            &stack,
            auth::OPERATOR,
            "POST",
            &path,
            json!({"entity_ids": ids(101)}),
        )
        .await;
        assert_eq!(status, 403, "operator, 101 ids, {step}: {e}");
        assert_eq!(e["error"]["code"], "batch_limit", "{e}");
    }
    // 100 is within the operator's limit (above the approval threshold, so it waits).
    let (status, r) = send(
        &stack,
        auth::OPERATOR,
        "POST",
        "/actions/PurchaseOrder/makePayment/plan",
        json!({"entity_ids": ids(100)}),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["approval_required"], true, "{r}");
    // Duplicates are not distinct entities.
    let mut doubled = ids(100);
    doubled.push("PO-0001".into());
    let (status, r) = send(
        &stack,
        auth::OPERATOR,
        "POST",
        "/actions/PurchaseOrder/makePayment/plan",
        json!({"entity_ids": doubled}),
    )
    .await;
    assert_eq!(status, 200, "{r}");

    // Admins are not narrowed: 101 ids need approval, nothing else.
    let (status, r) = send(
        &stack,
        auth::ADMIN,
        "POST",
        "/actions/PurchaseOrder/makePayment/plan",
        json!({"entity_ids": ids(101)}),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["approval_required"], true, "{r}");
    assert!(r["approval_token"].is_string(), "{r}");
    let (status, e) = send(
        &stack,
        auth::ADMIN,
        "POST",
        "/actions/PurchaseOrder/makePayment/execute",
        json!({"entity_ids": ids(101)}),
    )
    .await;
    assert_eq!(status, 403, "{e}");
    assert_eq!(e["error"]["code"], "approval_required", "{e}");
    let logs = stack
        .graph
        .query("MATCH (l:ActionLog) RETURN count(l)")
        .await
        .unwrap();
    assert_eq!(logs[0][0], 0);
}

fn tool_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// A viewer asks the agent to cancel an order and the (scripted) model tries anyway: the
/// action tool is not offered, the call fails as a tool error, nothing is planned or run.
#[tokio::test]
async fn no_prompt_makes_the_agent_act_for_a_viewer() {
    let llm = ScriptedLlm::start().await;
    let stack = stack_with_llm(&llm).await;
    let status_of = || {
        let stack = &stack;
        async move {
            stack
                .graph
                .query("MATCH (o:PurchaseOrder {id: 'PO-0001'}) RETURN o.status")
                .await
                .unwrap()[0][0]
                .clone()
        }
    };
    let before = status_of().await;
    llm.then([
        call(
            "propose_action_plan",
            json!({"entity_type": "PurchaseOrder", "action_name": "cancel", "entity_ids": ["PO-0001"], "parameters": {"reason": "duplicate"}}),
        ),
        text("I cannot change orders for you."),
        text("You may not cancel orders; ask an operator."),
        text("spare"),
    ]);
    let (status, r) = send(
        &stack,
        auth::VIEWER,
        "POST",
        "/chat",
        json!({"message": "cancel order PO-0001, it is a duplicate", "routing_mode": "rule", "trace": true}),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["route"]["intent"], "action", "{r}");
    assert!(
        r["approval"].is_null(),
        "no plan for a viewer: {}",
        r["approval"]
    );
    assert!(r["actions"].is_null(), "nothing ran: {}", r["actions"]);
    let requests = llm.requests();
    for request in &requests {
        let names = tool_names(request);
        assert!(
            !names.iter().any(|n| n == "propose_action_plan"),
            "the viewer's model was offered {names:?}"
        );
    }
    // The calls the model made anyway came back as tool errors.
    for step in r["intermediate_steps"].as_array().unwrap() {
        if step["type"] == "tool_result" && step["tool"] == "propose_action_plan" {
            assert_eq!(step["success"], false, "{step}");
        }
    }
    assert_eq!(status_of().await, before);
    let logs = stack
        .graph
        .query("MATCH (l:ActionLog) RETURN count(l)")
        .await
        .unwrap();
    assert_eq!(logs[0][0], 0);

    // The same question from an operator offers the action tool: the check above is not
    // vacuous.
    let seen = llm.requests().len();
    llm.then([
        text("Which reason should I record?"),
        text("Which reason should I record?"),
    ]);
    let (status, r) = send(
        &stack,
        auth::OPERATOR,
        "POST",
        "/chat",
        json!({"message": "cancel order PO-0001", "routing_mode": "rule"}),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    let offered: Vec<String> = llm.requests()[seen..].iter().flat_map(tool_names).collect();
    assert!(
        offered.iter().any(|n| n == "propose_action_plan"),
        "{offered:?}"
    );
}

/// Five subjects start their first turn in one client-named conversation at once, four
/// times each: exactly one subject gets it (an atomic claim, on every host and instance),
/// every other subject's turn is refused as not found, and the conversation holds only
/// the winner's turns. A read-then-write claim let two subjects in, and one's questions
/// then landed in the other's conversation.
#[tokio::test]
async fn concurrent_first_turns_of_one_named_conversation_give_it_to_one_subject() {
    let llm = ScriptedLlm::start().await;
    llm.then((0..40).map(|_| text("Hello.")));
    let stack = stack_with_llm(&llm).await;
    let subjects = [
        (auth::VIEWER, "viewer"),
        (auth::OPERATOR, "operator"),
        (auth::APPROVER, "approver"),
        (auth::APPROVER2, "approver2"),
        (auth::OPAPPROVER, "opapprover"),
    ];
    let id = "claimed-by-one";
    let turns = subjects.iter().flat_map(|&(key, name)| {
        let stack = &stack;
        (0..4).map(move |i| async move {
            let (status, r) = send(
                stack,
                key,
                "POST",
                "/chat",
                json!({"message": format!("hello from {name} {i}"), "conversation_id": id, "routing_mode": "rule"}),
            )
            .await;
            (name, status, r)
        })
    });
    let answers = futures::future::join_all(turns).await;
    let mut winners = std::collections::BTreeSet::new();
    let mut admitted = 0;
    for (name, status, r) in &answers {
        match status {
            200 => {
                winners.insert(*name);
                admitted += 1;
            }
            404 => assert_eq!(r["error"]["code"], "not_found", "{r}"),
            other => panic!("{name}: {other} {r}"),
        }
    }
    println!(
        "claims: {winners:?} admitted {admitted} of {}",
        answers.len()
    );
    assert_eq!(winners.len(), 1, "{answers:?}");
    let winner = winners.first().copied().unwrap_or_default();

    let (status, c) = send(
        &stack,
        auth::ADMIN,
        "GET",
        &format!("/conversations/{id}"),
        Value::Null,
    )
    .await;
    assert_eq!(status, 200, "{c}");
    let questions = kg_e2e::chat_client::user_turns(&c);
    assert_eq!(questions.len(), admitted, "{c}");
    assert!(
        questions
            .iter()
            .all(|q| q.starts_with(&format!("hello from {winner} "))),
        "another subject's turn in {winner}'s conversation: {questions:?}"
    );
}
