//! `get_node_statistics` through the whole stack (HTTP → devhost → dispatcher → WIT →
//! query-tools → Query API → devgraph) against the same Cypher sent straight to devgraph,
//! so the stack's own overhead is visible, and the same tool called over MCP (`POST /mcp`,
//! `tools/call`), so MCP's own cost per call is too. 1,000 sequential calls each, after a
//! warm-up; the route and MCP calls alternate, so both see the same machine.
//! Run: `cargo bench -p kg-e2e --bench tool_latency` (after scripts/setup.sh); on Spin:
//! `KG_E2E_HOST=spin SPIN_BIN=… cargo bench -p kg-e2e --bench tool_latency`.

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
    let over_mcp = || {
        client
            .post(format!("{}/mcp", host.url))
            .header("mcp-protocol-version", "2025-11-25")
            .header("accept", "application/json, text/event-stream")
            .body(
                json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                    "name": "get_node_statistics",
                    "arguments": {"label": "PurchaseOrder", "sample_size": 0}}})
                .to_string(),
            )
            .send()
    };
    let labels = "CALL db.labels() YIELD label RETURN label ORDER BY label LIMIT 1000";
    let count = "MATCH (n:`PurchaseOrder`) RETURN count(n) AS count LIMIT 1";

    let (through_stack, through_mcp) = measure_alternating(
        || async {
            let r = tool().await?.error_for_status()?;
            r.bytes().await?;
            Ok(())
        },
        || async {
            let r = over_mcp().await?.error_for_status()?;
            let answer: serde_json::Value = r.json().await?;
            anyhow::ensure!(answer["result"]["isError"] == false, "{answer}");
            Ok(())
        },
    )
    .await?;
    let straight = measure(|| async {
        direct(labels).await?.error_for_status()?.bytes().await?;
        direct(count).await?.error_for_status()?.bytes().await?;
        Ok(())
    })
    .await?;
    let host_name = format!("{:?}", host.kind).to_lowercase();
    report(
        &format!("get_node_statistics, POST /tools/… on {host_name}"),
        &through_stack,
    );
    report(
        &format!("the same over MCP, POST /mcp tools/call on {host_name}"),
        &through_mcp,
    );
    report("the same two queries straight to devgraph", &straight);
    println!(
        "stack overhead at the median: {:.2} ms",
        ms(median(&through_stack)) - ms(median(&straight))
    );
    println!(
        "MCP overhead per tool call at the median: {:.2} ms",
        ms(median(&through_mcp)) - ms(median(&through_stack))
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

/// `a` and `b` called in turn, so drift in the machine's speed hits both alike.
async fn measure_alternating<A, FutA, B, FutB>(
    a: A,
    b: B,
) -> anyhow::Result<(Vec<Duration>, Vec<Duration>)>
where
    A: Fn() -> FutA,
    FutA: std::future::Future<Output = anyhow::Result<()>>,
    B: Fn() -> FutB,
    FutB: std::future::Future<Output = anyhow::Result<()>>,
{
    for _ in 0..20 {
        a().await?;
        b().await?;
    }
    let (mut first, mut second) = (Vec::with_capacity(CALLS), Vec::with_capacity(CALLS));
    for _ in 0..CALLS {
        let started = Instant::now();
        a().await?;
        first.push(started.elapsed());
        let started = Instant::now();
        b().await?;
        second.push(started.elapsed());
    }
    first.sort();
    second.sort();
    Ok((first, second))
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
