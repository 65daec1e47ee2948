//! devhost's outbound connection pool under load (issue #18 item 3): 16 clients call one
//! query tool back to back for 10 s on 127.0.0.1 (each call is two graph round trips from
//! devhost to devgraph), once with `DEVHOST_OUTBOUND_POOL=off` (a new TCP connection per
//! outbound request, as before the pool) and once with the pool on. Prints calls/s, median
//! and p99 latency, errors and devhost's memory for both; the target is 2,000 calls in the
//! 10 s with zero errors. Errors fail the run; a rate below the target is only reported.
//! Run: `cargo bench -p kg-e2e --bench outbound_pool` (after scripts/setup.sh).

use kg_e2e::{AppHost, Graph, HostKind, KeyValue, app_manifest};
use std::time::{Duration, Instant};

const CLIENTS: usize = 16;
const LOAD_TIME: Duration = Duration::from_secs(10);
const TARGET_CALLS: usize = 2_000;
const WARM_UP: usize = 50;
const TOOL: &str = "/tools/get_node_statistics";
const TOOL_BODY: &str = r#"{"label": "PurchaseOrder"}"#;

struct Run {
    calls: usize,
    errors: usize,
    elapsed: Duration,
    latencies: Vec<Duration>,
    rss_kib: Option<u64>,
}

fn main() -> anyhow::Result<()> {
    println!(
        "| devhost outbound pool | tool calls in {} s at {CLIENTS} clients | calls/s | median | p99 | errors | devhost RSS after |",
        LOAD_TIME.as_secs()
    );
    println!("|---|---|---|---|---|---|---|");
    let mut pooled_errors = 0;
    let mut pooled_calls = 0;
    for mode in ["off", "on"] {
        // SAFETY: no other thread runs here: each mode's runtime is built after this and
        // shut down before the next mode; devhost inherits the variable when spawned.
        unsafe { std::env::set_var("DEVHOST_OUTBOUND_POOL", mode) };
        let run = tokio::runtime::Runtime::new()?.block_on(measure())?;
        let at = |q: f64| {
            run.latencies
                .get(((run.latencies.len() as f64 - 1.0) * q).round() as usize)
                .map_or(f64::NAN, |d| ms(*d))
        };
        println!(
            "| {mode} | {} | {:.0} | {:.2} ms | {:.2} ms | {} | {} |",
            run.calls,
            run.calls as f64 / run.elapsed.as_secs_f64(),
            at(0.5),
            at(0.99),
            run.errors,
            run.rss_kib
                .map_or("?".into(), |k| format!("{:.0} MiB", k as f64 / 1024.0)),
        );
        if mode == "on" {
            pooled_errors = run.errors;
            pooled_calls = run.calls;
            use kg_e2e::bench_results::record;
            record("load.calls", run.calls as f64)?;
            record("load.errors", run.errors as f64)?;
            if let Some(kib) = run.rss_kib {
                record("load.rss_mib", kib as f64 / 1024.0)?;
            }
        }
    }
    let met = pooled_errors == 0 && pooled_calls >= TARGET_CALLS;
    println!(
        "target ({TARGET_CALLS} calls in {} s, 0 errors, pool on): {}",
        LOAD_TIME.as_secs(),
        if met { "met" } else { "MISSED" }
    );
    anyhow::ensure!(
        pooled_errors == 0,
        "{pooled_errors} tool calls failed with the pool on"
    );
    Ok(())
}

async fn measure() -> anyhow::Result<Run> {
    let graph = Graph::start().await?;
    let dir = tempfile::tempdir()?;
    let host = AppHost::start_on(
        HostKind::Devhost,
        &app_manifest(),
        &KeyValue::File(dir.path().join("kv.db")),
        &graph.variables(),
    )
    .await?;
    let target = format!("{}{TOOL}", host.url);
    let client = kg_e2e::auth::client(kg_e2e::auth::ADMIN);
    for _ in 0..WARM_UP {
        client
            .post(&target)
            .body(TOOL_BODY)
            .send()
            .await?
            .error_for_status()?
            .bytes()
            .await?;
    }

    let started = Instant::now();
    let deadline = started + LOAD_TIME;
    let workers = (0..CLIENTS).map(|_| {
        let client = kg_e2e::auth::client(kg_e2e::auth::ADMIN);
        let target = target.clone();
        async move {
            let (mut latencies, mut errors) = (Vec::new(), 0usize);
            while Instant::now() < deadline {
                let sent = Instant::now();
                match client.post(&target).body(TOOL_BODY).send().await {
                    Ok(r) if r.status().is_success() => match r.bytes().await {
                        Ok(_) => latencies.push(sent.elapsed()),
                        Err(_) => errors += 1,
                    },
                    Ok(r) => {
                        eprintln!("tool call answered {}", r.status());
                        errors += 1;
                    }
                    Err(e) => {
                        eprintln!("tool call failed: {e}");
                        errors += 1;
                    }
                }
            }
            (latencies, errors)
        }
    });
    let results = futures::future::join_all(workers).await;
    let elapsed = started.elapsed();
    let errors = results.iter().map(|r| r.1).sum();
    let mut latencies: Vec<Duration> = results.into_iter().flat_map(|r| r.0).collect();
    latencies.sort();
    let rss_kib = host.rss_kib();
    host.stop().await?;
    graph.stop().await?;
    Ok(Run {
        calls: latencies.len(),
        errors,
        elapsed,
        latencies,
        rss_kib,
    })
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
