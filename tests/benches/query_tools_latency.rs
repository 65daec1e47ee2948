//! Per-tool latency of all nine query tools through devhost (HTTP → dispatcher → WIT →
//! query-tools → Query API → devgraph), 100 calls each after a warm-up, and the share of
//! that time spent waiting on the graph. The graph time is measured by a timing TCP proxy
//! between devhost and devgraph: for each graph request, from its first byte in to the last
//! byte of the answer out (each outgoing request is its own connection). The rest is the
//! stack: HTTP in and out, the component instance, WIT, JSON, the tool's own logic.
//! Run: `cargo bench -p kg-e2e --bench query_tools_latency` (after scripts/setup.sh).

use kg_e2e::{AppHost, GRAPH_PASSWORD, Graph, app_manifest};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const CALLS: usize = 100;

#[derive(Default)]
struct GraphClock {
    nanos: AtomicU64,
    requests: AtomicU64,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let graph = Graph::start().await?;
    let clock = Arc::new(GraphClock::default());
    let proxy = start_proxy(
        graph.url.trim_start_matches("http://").to_string(),
        clock.clone(),
    )
    .await?;
    let dir = tempfile::tempdir()?;
    let host = AppHost::start(
        &app_manifest(),
        &dir.path().join("kv.db"),
        &[
            ("neo4j_origin", proxy),
            ("neo4j_password", GRAPH_PASSWORD.to_string()),
        ],
    )
    .await?;
    let client = kg_e2e::auth::client(kg_e2e::auth::ADMIN);
    let tools: [(&str, Value); 9] = [
        ("search_instances", json!({"search_term": "acme"})),
        (
            "get_instances_by_class",
            json!({"class_name": "PurchaseOrder", "filters": [{"property": "status", "value": "approved"}], "limit": 10}),
        ),
        (
            "get_instance_neighbors",
            json!({"instance": "SUP-001", "hops": 2}),
        ),
        (
            "find_path_between_instances",
            json!({"start": "SUP-001", "end": "ACC-MAIN"}),
        ),
        ("get_ontology_classes", json!({})),
        ("get_ontology_relationships", json!({})),
        ("describe_class", json!({"class_name": "Supplier"})),
        (
            "get_node_statistics",
            json!({"label": "PurchaseOrder", "sample_size": 3}),
        ),
        (
            "run_read_cypher",
            json!({"query": "MATCH (s:Supplier)-[:SUPPLIES]->(p:Product) RETURN s.name AS supplier, count(p) AS products ORDER BY products DESC"}),
        ),
    ];
    println!(
        "{CALLS} calls per tool through devhost; graph = time inside graph requests (via a timing proxy)"
    );
    println!(
        "{:<28} {:>9} {:>9} {:>10} {:>11} {:>8}",
        "tool", "median", "p90", "graph/call", "graph share", "queries"
    );
    for (tool, args) in &tools {
        let url = format!("{}/tools/{tool}", host.url);
        let body = args.to_string();
        let call = || async {
            let response = client.post(&url).body(body.clone()).send().await?;
            let status = response.status();
            let text = response.text().await?;
            anyhow::ensure!(status.is_success(), "{tool}: {status} {text}");
            Ok::<_, anyhow::Error>(())
        };
        for _ in 0..10 {
            call().await?;
        }
        let graph_before = clock.nanos.load(Ordering::SeqCst);
        let requests_before = clock.requests.load(Ordering::SeqCst);
        let mut samples = Vec::with_capacity(CALLS);
        for _ in 0..CALLS {
            let started = Instant::now();
            call().await?;
            samples.push(started.elapsed());
        }
        // A connection is counted when it closes, just after its call returns.
        tokio::time::sleep(Duration::from_millis(200)).await;
        let graph_total = Duration::from_nanos(clock.nanos.load(Ordering::SeqCst) - graph_before);
        let requests = clock.requests.load(Ordering::SeqCst) - requests_before;
        let total: Duration = samples.iter().sum();
        samples.sort();
        println!(
            "{tool:<28} {:>6.2} ms {:>6.2} ms {:>7.2} ms {:>10.0} % {:>8.1}",
            ms(samples[CALLS / 2]),
            ms(samples[CALLS * 9 / 10]),
            ms(graph_total) / CALLS as f64,
            100.0 * graph_total.as_secs_f64() / total.as_secs_f64(),
            requests as f64 / CALLS as f64,
        );
    }
    host.stop().await?;
    graph.stop().await?;
    Ok(())
}

/// A TCP proxy to `upstream` that adds each request's time in the graph to `clock`.
async fn start_proxy(upstream: String, clock: Arc<GraphClock>) -> anyhow::Result<String> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    tokio::spawn(async move {
        while let Ok((inbound, _)) = listener.accept().await {
            let upstream = upstream.clone();
            let clock = clock.clone();
            tokio::spawn(async move {
                let Ok(outbound) = TcpStream::connect(&upstream).await else {
                    return;
                };
                let (mut in_read, mut in_write) = inbound.into_split();
                let (mut out_read, mut out_write) = outbound.into_split();
                let first_in = Arc::new(std::sync::Mutex::new(None::<Instant>));
                let first = first_in.clone();
                let requests = tokio::spawn(async move {
                    let mut buf = vec![0u8; 64 * 1024];
                    while let Ok(n) = in_read.read(&mut buf).await {
                        if n == 0 {
                            break;
                        }
                        first.lock().unwrap().get_or_insert_with(Instant::now);
                        if out_write.write_all(&buf[..n]).await.is_err() {
                            break;
                        }
                    }
                    let _ = out_write.shutdown().await;
                });
                let mut last_out = None;
                let mut buf = vec![0u8; 64 * 1024];
                while let Ok(n) = out_read.read(&mut buf).await {
                    if n == 0 || in_write.write_all(&buf[..n]).await.is_err() {
                        break;
                    }
                    last_out = Some(Instant::now());
                }
                let _ = in_write.shutdown().await;
                requests.abort();
                let first = *first_in.lock().unwrap();
                if let (Some(first), Some(last)) = (first, last_out) {
                    clock
                        .nanos
                        .fetch_add((last - first).as_nanos() as u64, Ordering::SeqCst);
                    clock.requests.fetch_add(1, Ordering::SeqCst);
                }
            });
        }
    });
    Ok(url)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
