//! Two instances of the application behind no load balancer but the test itself, sharing
//! one Redis (the production key-value store) and one graph: what one instance stores, the
//! other reads. Instance `a` runs on this run's host (`KG_E2E_HOST`), instance `b` on
//! devhost, so a Spin run also proves Spin and devhost agree on Redis.

use kg_e2e::auth;
use kg_e2e::llm_stub::{call, text};
use kg_e2e::{AppHost, Graph, Pair};
use serde_json::{Value, json};
use std::time::Instant;

async fn pair() -> Pair {
    Pair::start(&[]).await.unwrap()
}

async fn chat(host: &AppHost, body: Value) -> (u16, Value) {
    host.send("POST", "/chat", &body.to_string()).await.unwrap()
}

async fn order_status(graph: &Graph, id: &str) -> Value {
    graph
        .query(&format!(
            "MATCH (o:PurchaseOrder {{id: '{id}'}}) RETURN o.status"
        ))
        .await
        .unwrap()[0][0]
        .clone()
}

/// Asks instance `a` to cancel `order` (an action that requires approval) and returns the
/// approval token; `then` are the LLM's replies after the plan (for the approved run).
async fn propose_cancel(p: &Pair, order: &str, then: &[&str]) -> String {
    p.llm.then([
        call("propose_action_plan", json!({"entity_type": "PurchaseOrder", "action_name": "cancel", "entity_ids": [order], "parameters": {"reason": "duplicate"}})),
        text("Proposed."),
    ]);
    p.llm.then(then.iter().map(|t| text(t)));
    let (status, r) = chat(
        &p.a,
        json!({"message": format!("Cancel order {order}, it is a duplicate"), "routing_mode": "rule"}),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    r["approval"]["approval_token"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn a_conversation_continued_alternately_on_both_keeps_every_turn_in_order() {
    let p = pair().await;
    let greetings = ["hello", "hi", "thanks", "good morning", "hey", "thank you"];
    p.llm.then(
        greetings
            .iter()
            .enumerate()
            .map(|(i, _)| text(&format!("reply {i}"))),
    );
    let mut conversation: Option<String> = None;
    for (i, greeting) in greetings.iter().enumerate() {
        let host = if i % 2 == 0 { &p.a } else { &p.b };
        let mut body = json!({"message": greeting, "routing_mode": "rule"});
        if let Some(id) = &conversation {
            body["conversation_id"] = json!(id);
        }
        let (status, r) = chat(host, body).await;
        assert_eq!(status, 200, "turn {i}: {r}");
        assert_eq!(r["answer"], format!("reply {i}"));
        let id = r["conversation_id"].as_str().unwrap().to_string();
        if let Some(previous) = &conversation {
            assert_eq!(&id, previous, "the same conversation on both instances");
        }
        conversation = Some(id);
    }
    let id = conversation.unwrap();
    // Each instance sees the whole history, in order.
    for host in [&p.a, &p.b] {
        let (status, c) = host.get(&format!("/conversations/{id}")).await.unwrap();
        assert_eq!(status, 200, "{c}");
        let contents: Vec<&str> = c["turns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["content"].as_str().unwrap())
            .collect();
        let expected: Vec<String> = greetings
            .iter()
            .enumerate()
            .flat_map(|(i, g)| [g.to_string(), format!("reply {i}")])
            .collect();
        assert_eq!(contents, expected, "on {}", host.url);
    }
    // The later instances' requests carried the history the other instance stored.
    let last = p.llm.requests().pop().unwrap();
    assert!(last["messages"].to_string().contains("reply 4"), "{last}");
}

#[tokio::test]
async fn an_approval_issued_on_one_instance_is_redeemed_on_the_other() {
    let p = pair().await;
    let before = order_status(&p.graph, "PO-0001").await;
    let token = propose_cancel(&p, "PO-0001", &["Order PO-0001 is cancelled."]).await;
    assert_eq!(order_status(&p.graph, "PO-0001").await, before);

    // Redeemed by another subject: `cancel` wants a second pair of eyes.
    let (status, r) =
        p.b.send_as(
            Some(auth::APPROVER),
            "POST",
            "/chat/approve",
            &json!({"approval_token": token}).to_string(),
        )
        .await
        .unwrap();
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["actions"]["succeeded"], 1, "{r}");
    assert_eq!(order_status(&p.graph, "PO-0001").await, "cancelled");
}

#[tokio::test]
async fn fifty_concurrent_turns_split_across_both_instances_lose_none() {
    let p = pair().await;
    const TURNS: usize = 50;
    // The first turn creates the conversation; the other 49 race on it.
    p.llm.then((0..TURNS * 2).map(|_| text("noted")));
    let (status, first) = chat(&p.a, json!({"message": "hello", "routing_mode": "rule"})).await;
    assert_eq!(status, 200, "{first}");
    let id = first["conversation_id"].as_str().unwrap().to_string();
    let started = Instant::now();
    let requests = (1..TURNS).map(|i| {
        let host = if i % 2 == 0 { &p.a } else { &p.b };
        let body = json!({"message": format!("thanks {i}"), "conversation_id": id, "routing_mode": "rule"});
        async move { chat(host, body).await }
    });
    let answers = futures::future::join_all(requests).await;
    let elapsed = started.elapsed();
    for (status, r) in &answers {
        assert_eq!(*status, 200, "{r}");
    }
    let (_, c) = p.b.get(&format!("/conversations/{id}")).await.unwrap();
    let users = kg_e2e::chat_client::user_turns(&c);
    assert_eq!(users.len(), TURNS, "every user turn stored: {users:?}");
    for i in 1..TURNS {
        assert!(
            users.contains(&format!("thanks {i}").as_str()),
            "turn {i} lost"
        );
    }
    let assistants = c["turns"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["role"] == "assistant")
        .count();
    assert_eq!(assistants, TURNS);
    eprintln!(
        "scale-out: {} concurrent turns on two instances in {} ms",
        TURNS - 1,
        elapsed.as_millis()
    );
}

#[tokio::test]
async fn a_plan_redeemed_concurrently_on_both_instances_executes_once() {
    let p = pair().await;
    let token = propose_cancel(&p, "PO-0002", &["Done.", "Done."]).await;
    let body = json!({"approval_token": token}).to_string();
    let (on_a, on_b) = tokio::join!(
        p.a.send_as(Some(auth::APPROVER), "POST", "/chat/approve", &body),
        p.b.send_as(Some(auth::APPROVER), "POST", "/chat/approve", &body)
    );
    let mut answers = [on_a.unwrap(), on_b.unwrap()];
    // However the two redemptions interleave, the graph holds one cancellation, and the
    // second redemption is told so.
    let logs = p
        .graph
        .query(
            "MATCH (l:ActionLog) WHERE l.action_name = 'cancel' AND l.entity_id = 'PO-0002' RETURN count(l)",
        )
        .await
        .unwrap();
    assert_eq!(logs[0][0], 1, "one applied cancellation: {answers:?}");
    assert_eq!(order_status(&p.graph, "PO-0002").await, "cancelled");
    answers.sort_by_key(|a| a.0);
    assert_eq!(answers[0].0, 200, "{answers:?}");
    assert_eq!(answers[1].0, 409, "{answers:?}");
    assert_eq!(
        answers[1].1["error"]["code"], "approval_used",
        "{answers:?}"
    );
}
