//! `get_node_statistics` through the whole stack (HTTP → devhost → dispatcher → WIT →
//! query-tools → Query API → devgraph) against the same Cypher sent straight to devgraph,
//! so the stack's own overhead is visible. 1,000 sequential calls each, after a warm-up.
//! Run: `cargo bench -p kg-e2e --bench tool_latency` (after scripts/setup.sh).

use kg_e2e::{GRAPH_PASSWORD, Stack};
use serde_json::json;
use std::time::{Duration, Instant};

const CALLS: usize = 1_000;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let Stack {
        graph,
        host,
        dir: _dir,
    } = Stack::start().await?;
    let client = kg_e2e::auth::client(kg_e2e::auth::ADMIN);

    // The tool for one label without samples runs exactly these two READ queries.
    let tool = || {
        client
            .post(format!("{}/tools/get_node_statistics", host.url))
            .body(r#"{"label": "PurchaseOrder", "sample_size": 0}"#)
            .send()
    };
    let direct = |statement: &'static str| {
        client
            .post(format!("{}/db/neo4j/query/v2", graph.url))
            .basic_auth("neo4j", Some(GRAPH_PASSWORD))
            .json(&json!({"statement": statement, "accessMode": "READ"}))
            .send()
    };
    let labels = "CALL db.labels() YIELD label RETURN label ORDER BY label LIMIT 1000";
    let count = "MATCH (n:`PurchaseOrder`) RETURN count(n) AS count LIMIT 1";

    let through_stack = measure(|| async {
        let r = tool().await?.error_for_status()?;
        r.bytes().await?;
        Ok(())
    })
    .await?;
    let straight = measure(|| async {
        direct(labels).await?.error_for_status()?.bytes().await?;
        direct(count).await?.error_for_status()?.bytes().await?;
        Ok(())
    })
    .await?;
    report("get_node_statistics through devhost", &through_stack);
    report("the same two queries straight to devgraph", &straight);
    println!(
        "stack overhead at the median: {:.2} ms",
        ms(median(&through_stack)) - ms(median(&straight))
    );
    host.stop().await?;
    graph.stop().await?;
    Ok(())
}

async fn measure<F, Fut>(call: F) -> anyhow::Result<Vec<Duration>>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<()>>,
{
    for _ in 0..20 {
        call().await?;
    }
    let mut samples = Vec::with_capacity(CALLS);
    for _ in 0..CALLS {
        let started = Instant::now();
        call().await?;
        samples.push(started.elapsed());
    }
    samples.sort();
    Ok(samples)
}

fn median(sorted: &[Duration]) -> Duration {
    sorted[sorted.len() / 2]
}

fn report(what: &str, sorted: &[Duration]) {
    let at = |q: f64| ms(sorted[((sorted.len() as f64 - 1.0) * q).round() as usize]);
    println!(
        "{what}, {CALLS} calls: median {:.2} ms, p90 {:.2} ms, p99 {:.2} ms",
        at(0.5),
        at(0.9),
        at(0.99)
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
