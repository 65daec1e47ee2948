//! DESIGN.md §5's promise under load: 50 concurrent requests paying the same 20 orders, half
//! of them sharing one idempotency key, leave every order paid exactly once and the account
//! debited exactly once per order.

use kg_e2e::{Stack, auth};
use serde_json::{Value, json};

#[tokio::test]
async fn fifty_concurrent_payments_of_twenty_orders_pay_each_exactly_once() {
    let stack = Stack::start().await.unwrap();
    // Funds for everything, so each order's only reason to fail is "already paid".
    stack
        .graph
        .write("MATCH (a:Account {id: 'ACC-MAIN'}) SET a.balance = 10000000.0")
        .await
        .unwrap();
    let rows = stack
        .graph
        .query(
            "MATCH (o:PurchaseOrder {status: 'approved'})-[:PLACED_WITH]->(s:Supplier {blocked: false}) \
             RETURN o.id, o.amount ORDER BY o.id LIMIT 20",
        )
        .await
        .unwrap();
    assert_eq!(rows.len(), 20);
    let ids: Vec<String> = rows
        .iter()
        .map(|r| r[0].as_str().unwrap().to_string())
        .collect();
    let total: f64 = rows.iter().map(|r| r[1].as_f64().unwrap()).sum();

    let client = reqwest::Client::new();
    let url = format!(
        "{}/actions/PurchaseOrder/makePayment/execute",
        stack.host.url
    );
    let requests = (0..50).map(|i| {
        let mut order = ids.clone();
        order.rotate_left(i % 20);
        let mut body = json!({"entity_ids": order, "options": {"chunk_size": 4, "max_concurrent": 5, "max_retries": 10}});
        if i % 2 == 0 {
            body["idempotency_key"] = json!("race-shared-key");
        }
        let (client, url) = (client.clone(), url.clone());
        tokio::spawn(async move {
            let response = client
                .post(url)
                .bearer_auth(auth::ADMIN)
                .body(body.to_string())
                .send()
                .await
                .unwrap();
            let status = response.status().as_u16();
            (status, response.json::<Value>().await.unwrap())
        })
    });
    let mut successes = 0;
    for handle in requests {
        let (status, r) = handle.await.unwrap();
        assert_eq!(status, 200, "{r}");
        assert_eq!(r["total"], 20);
        for f in r["failures"].as_array().unwrap() {
            assert_eq!(
                f["error"], "Order already paid",
                "the only acceptable failure: {f}"
            );
        }
        successes += r["successes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["replayed"] == false)
            .count();
    }
    assert_eq!(
        successes, 20,
        "each order executed once across all requests"
    );

    for id in &ids {
        let paid = stack
            .graph
            .query(&format!(
                "MATCH (p:Payment)-[:PAYS]->(o:PurchaseOrder {{id: '{id}'}}) RETURN count(p), o.status"
            ))
            .await
            .unwrap();
        assert_eq!(paid[0], json!([1, "paid"]), "{id}");
    }
    let balance = stack
        .graph
        .query("MATCH (a:Account {id: 'ACC-MAIN'}) RETURN a.balance")
        .await
        .unwrap()[0][0]
        .as_f64()
        .unwrap();
    assert!(
        (balance - (10_000_000.0 - total)).abs() < 1e-6,
        "debited once per order: {balance}"
    );
    let logs = stack
        .graph
        .query("MATCH (l:ActionLog) RETURN count(l)")
        .await
        .unwrap();
    assert_eq!(logs[0][0], 20);
}
