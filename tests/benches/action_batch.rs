//! Paying N orders through the whole stack, two ways, on the same devgraph:
//! - chunked: one request; the executor sends one check-and-apply statement per chunk of
//!   50 orders, up to 10 chunks concurrently (DESIGN.md §5);
//! - per order: one request (hence one statement) per order, 10 requests in flight at a
//!   time (the seed's design: one action call per entity with a semaphore of 10).
//!
//! Each run pays fresh orders created for it. Prints the median over the runs and the ratio.
//! Run: `cargo bench -p kg-e2e --bench action_batch` (after scripts/setup.sh).

use futures::StreamExt;
use kg_e2e::Stack;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // Batches of 1,000 run without an approval step: this measures execution only.
    let stack = Stack::start_with(&[("approval_batch_threshold", "1000000".to_string())]).await?;
    // The lookup indexes a deployment creates once (POST /actions/setup).
    kg_e2e::auth::client(kg_e2e::auth::ADMIN)
        .post(format!("{}/actions/setup", stack.host.url))
        .send()
        .await?
        .error_for_status()?;
    // Enough money for every run.
    stack
        .graph
        .write("MATCH (a:Account {id: 'ACC-MAIN'}) SET a.balance = 1000000000.0")
        .await?;
    for (orders, runs) in [(20, 21), (1_000, 5)] {
        let mut chunked = Vec::new();
        let mut per_order = Vec::new();
        for run in 0..runs {
            let ids = create_orders(&stack, &format!("C{orders}-{run}"), orders).await?;
            chunked.push(pay_in_one_request(&stack, &ids).await?);
            let ids = create_orders(&stack, &format!("P{orders}-{run}"), orders).await?;
            per_order.push(pay_one_by_one(&stack, &ids).await?);
        }
        let (c, p) = (median(&mut chunked), median(&mut per_order));
        println!(
            "{orders:>5} orders: chunked median {:>8.1} ms | one statement per order, 10 concurrent: median {:>8.1} ms | ratio {:.1}x ({runs} runs each)",
            ms(c),
            ms(p),
            ms(p) / ms(c)
        );
    }
    Ok(())
}

async fn create_orders(stack: &Stack, prefix: &str, n: usize) -> anyhow::Result<Vec<String>> {
    stack
        .graph
        .create_approved_orders(&format!("BENCH-{prefix}"), n, 10.0)
        .await
}

async fn pay(client: &reqwest::Client, url: &str, ids: &[String]) -> anyhow::Result<Value> {
    let r: Value = client
        .post(url)
        .body(json!({"entity_ids": ids}).to_string())
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?;
    anyhow::ensure!(r["failed"] == 0, "a payment failed: {}", r["failures"]);
    Ok(r)
}

fn url(stack: &Stack) -> String {
    format!(
        "{}/actions/PurchaseOrder/makePayment/execute",
        stack.host.url
    )
}

async fn pay_in_one_request(stack: &Stack, ids: &[String]) -> anyhow::Result<Duration> {
    let client = kg_e2e::auth::client(kg_e2e::auth::ADMIN);
    let start = Instant::now();
    let r = pay(&client, &url(stack), ids).await?;
    anyhow::ensure!(r["succeeded"].as_u64() == Some(ids.len() as u64));
    Ok(start.elapsed())
}

async fn pay_one_by_one(stack: &Stack, ids: &[String]) -> anyhow::Result<Duration> {
    let client = kg_e2e::auth::client(kg_e2e::auth::ADMIN);
    let url = url(stack);
    let start = Instant::now();
    let results: Vec<anyhow::Result<Value>> = futures::stream::iter(ids.iter().cloned())
        .map(|id| {
            let (client, url) = (client.clone(), url.clone());
            async move { pay(&client, &url, &[id]).await }
        })
        .buffer_unordered(10)
        .collect()
        .await;
    for r in results {
        r?;
    }
    Ok(start.elapsed())
}

fn median(samples: &mut [Duration]) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1_000.0
}
