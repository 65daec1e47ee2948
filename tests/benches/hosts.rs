//! devhost and real Spin side by side (issue #36), in one run on one machine, serving the
//! same `.wasm` files against the same kind of graph and an instant scripted LLM, with the
//! production defaults that cost key-value writes (the per-subject request counter on, set
//! far above what the run sends so nothing is refused). Per route: median and p99 on each
//! host and Spin's median over devhost's; and the key-value reads and writes one request
//! makes, counted by devhost's `--server-timing` in a pass of its own (the same build does
//! the same on Spin; the timed passes run without the header's cost). Then the tool call's
//! requests per second at 16 concurrent clients for 10 s, and each host's resident memory.
//!
//! Routes: `GET /health/live`, `GET /health/ready`, `GET /health`, one query tool call, a
//! 0-step and a 4-step `/chat`, `/chat/stream` to its first event (`conversation_id`), and
//! a 100-order payment batch (60 payable) in one request.
//!
//! `KG_BENCH_KV=redis` runs both hosts on a Redis started for the run (the production store)
//! instead of each host's SQLite file; `KG_BENCH_KV=sqlite-wal` on SQLite files put in WAL
//! mode before the host opens them (devhost sets WAL itself; Spin keeps the mode it finds). Run: `cargo bench -p kg-e2e --bench hosts` (Spin from
//! SPIN_BIN or PATH; devhost only without one); `KG_BENCH_SHORT=1` for fewer samples.

use kg_e2e::llm_stub::{ScriptedLlm, distinct_statistics_steps, text};
use kg_e2e::redis::RedisServer;
use kg_e2e::{AppHost, Graph, HostKind, KeyValue, app_manifest, server_timing, spin_binary};
use serde_json::json;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

const CLIENTS: usize = 16;
const LOAD_TIME: Duration = Duration::from_secs(10);
const TOOL: &str = "/tools/get_node_statistics";
const TOOL_BODY: &str = r#"{"label": "PurchaseOrder"}"#;
const STEPS: usize = 4;
const ANSWER: &str = "There are 10 suppliers.";
const BATCH: usize = 100;
/// Of every five orders a batch creates, how many are payable (the rest go back to draft).
const PAYABLE_PER_FIVE: usize = 3;

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Route {
    Live,
    Ready,
    Health,
    Tool,
    Chat0,
    Chat4,
    StreamFirst,
    Batch,
}

impl Route {
    const ALL: [Route; 8] = [
        Route::Live,
        Route::Ready,
        Route::Health,
        Route::Tool,
        Route::Chat0,
        Route::Chat4,
        Route::StreamFirst,
        Route::Batch,
    ];

    fn name(self) -> &'static str {
        match self {
            Route::Live => "GET /health/live",
            Route::Ready => "GET /health/ready",
            Route::Health => "GET /health",
            Route::Tool => "tool call",
            Route::Chat0 => "/chat, 0 steps",
            Route::Chat4 => "/chat, 4 steps",
            Route::StreamFirst => "/chat/stream first event",
            Route::Batch => "100-order batch",
        }
    }

    /// Samples per host (after a warm-up of a tenth as many, at least 2).
    fn samples(self, short: bool) -> usize {
        match (self, short) {
            (Route::Batch, true) => 5,
            (Route::Batch, false) => 20,
            (_, true) => 40,
            (_, false) => 200,
        }
    }
}

/// What one host is run against: its graph, LLM stub and store stay up for all its routes.
struct Target {
    host: AppHost,
    graph: Graph,
    llm: ScriptedLlm,
    client: reqwest::Client,
    batches: usize,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let short = std::env::var("KG_BENCH_SHORT").is_ok_and(|v| v == "1");
    let (redis, wal) = match std::env::var("KG_BENCH_KV").as_deref() {
        Ok("redis") => (Some(RedisServer::start().await?), false),
        Ok("sqlite") | Err(_) => (None, false),
        Ok("sqlite-wal") => (None, true),
        Ok(other) => anyhow::bail!("KG_BENCH_KV={other}: sqlite (default), sqlite-wal or redis"),
    };
    let store = match (&redis, wal) {
        (Some(_), _) => "Redis",
        (None, false) => "SQLite file (as Spin creates it: rollback journal)",
        (None, true) => "SQLite file made WAL before the host opened it",
    };
    let mut kinds = vec![HostKind::Devhost];
    match spin_binary() {
        Some(path) => {
            println!("spin: {}", path.display());
            kinds.push(HostKind::Spin);
        }
        None => println!("SKIPPED: no spin binary (SPIN_BIN or PATH): devhost only"),
    }

    // Key-value calls per request, from devhost's Server-Timing.
    let counts = {
        let mut target = start(
            HostKind::Devhost,
            redis.as_ref(),
            wal,
            &["--server-timing", "on"],
        )
        .await?;
        let mut counts = BTreeMap::new();
        for route in Route::ALL {
            counts.insert(route, kv_counts(&mut target, route).await?);
        }
        target.host.stop().await?;
        counts
    };

    let mut results: BTreeMap<(Route, &str), (f64, f64)> = BTreeMap::new();
    let mut loads = Vec::new();
    for &kind in &kinds {
        let mut target = start(kind, redis.as_ref(), wal, &[]).await?;
        for route in Route::ALL {
            let mut samples = timed(&mut target, route, route.samples(short)).await?;
            samples.sort();
            let at = |q: f64| ms(samples[((samples.len() as f64 - 1.0) * q).round() as usize]);
            results.insert((route, kind.name()), (at(0.5), at(0.99)));
        }
        let (rate, errors) = load(&target.host.url).await;
        let rss = target
            .host
            .rss_kib()
            .map_or("?".into(), |k| format!("{:.0} MiB", k as f64 / 1024.0));
        loads.push(format!(
            "{}: {rate:.0} tool calls/s at {CLIENTS} clients ({errors} errors), RSS after {rss}",
            kind.name()
        ));
        target.host.stop().await?;
    }

    println!(
        "store: {store}; medians / p99 in ms ({} samples per route, batch {})",
        Route::Tool.samples(short),
        Route::Batch.samples(short)
    );
    println!(
        "| route | KV reads / writes per request | devhost median / p99 | spin median / p99 | spin / devhost |"
    );
    println!("|---|---|---|---|---|");
    for route in Route::ALL {
        let (reads, writes) = counts[&route];
        let cell = |host: &str| {
            results
                .get(&(route, host))
                .map_or("-".to_string(), |(m, p)| format!("{m:.2} / {p:.2}"))
        };
        let ratio = match (
            results.get(&(route, "devhost")),
            results.get(&(route, "spin")),
        ) {
            (Some((d, _)), Some((s, _))) => format!("{:.2}x", s / d),
            _ => "-".into(),
        };
        println!(
            "| {} | {reads:.0} / {writes:.0} | {} | {} | {ratio} |",
            route.name(),
            cell("devhost"),
            cell("spin"),
        );
    }
    for line in loads {
        println!("{line}");
    }
    // An agent step as benches/peers reads it next to LangGraph's: the 4-step turn less
    // the 0-step one, / STEPS, at the client (round trips included: Spin offers no
    // Server-Timing to take them out), and the 0-step turn; the same scripts as
    // request_profile's (6 LLM calls and 4 graph statements against 1 LLM call).
    for &kind in &kinds {
        let median = |route| results.get(&(route, kind.name())).map(|(m, _)| *m);
        if let (Some(zero), Some(four)) = (median(Route::Chat0), median(Route::Chat4)) {
            let step = (four - zero) / STEPS as f64;
            println!(
                "{}: an agent step at the client ((4-step - 0-step /chat) / {STEPS}) {step:.3} ms; a 0-step /chat {zero:.3} ms",
                kind.name()
            );
            println!(
                "steps-json: {}",
                json!({"host": kind.name(), "step_ms": step, "zero_ms": zero})
            );
        }
    }
    if let Some(redis) = redis {
        redis.stop().await?;
    }
    Ok(())
}

async fn start(
    kind: HostKind,
    redis: Option<&RedisServer>,
    wal: bool,
    flags: &[&str],
) -> anyhow::Result<Target> {
    let graph = Graph::start().await?;
    let llm = ScriptedLlm::start().await;
    let dir = tempfile::tempdir()?;
    let kv = match redis {
        Some(redis) => KeyValue::Redis(redis.url.clone()),
        None => KeyValue::File(dir.keep().join("kv.db")),
    };
    if let (KeyValue::File(path), true) = (&kv, wal) {
        // The journal mode is kept in the file: Spin's store, which sets none, then commits
        // with one fsync of the log instead of a journal created, synced and deleted.
        let connection = rusqlite::Connection::open(path)?;
        let mode: String = connection.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
        anyhow::ensure!(mode == "wal", "{}: journal mode {mode}", path.display());
    }
    let mut variables = graph.variables();
    variables.extend(llm.variables());
    // The production defaults that cost writes: every request counted (600 a minute by
    // default; high here so that the run is never refused).
    variables.push(("rate_limit_requests_per_minute", "100000000".into()));
    // A batch of 100 runs without an approval step: this measures execution.
    variables.push(("approval_batch_threshold", "1000000".into()));
    let host = if flags.is_empty() {
        AppHost::start_on(kind, &app_manifest(), &kv, &variables).await?
    } else {
        AppHost::start_devhost_with_flags(&app_manifest(), &kv, &variables, flags).await?
    };
    let client = kg_e2e::auth::client(kg_e2e::auth::ADMIN);
    client
        .post(format!("{}/actions/setup", host.url))
        .send()
        .await?
        .error_for_status()?;
    graph
        .write("MATCH (a:Account {id: 'ACC-MAIN'}) SET a.balance = 1000000000.0")
        .await?;
    Ok(Target {
        host,
        graph,
        llm,
        client,
        batches: 0,
    })
}

/// Median key-value reads and writes of `route`'s requests (ten, after two of warm-up).
async fn kv_counts(target: &mut Target, route: Route) -> anyhow::Result<(f64, f64)> {
    let (mut reads, mut writes) = (Vec::new(), Vec::new());
    for i in 0..12 {
        let (_, header) = request(target, route).await?;
        let header = header
            .ok_or_else(|| anyhow::anyhow!("{}: no Server-Timing from devhost", route.name()))?;
        if i < 2 {
            continue;
        }
        let count = |name: &str| {
            server_timing::entries(&header)
                .filter(|e| e.name == name)
                .map(|e| e.count())
                .sum::<f64>()
        };
        reads.push(count("kv-read"));
        writes.push(count("kv-write"));
    }
    Ok((median(&mut reads), median(&mut writes)))
}

async fn timed(target: &mut Target, route: Route, n: usize) -> anyhow::Result<Vec<Duration>> {
    for _ in 0..(n / 10).max(2) {
        request(target, route).await?;
    }
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        samples.push(request(target, route).await?.0);
    }
    Ok(samples)
}

/// One request of `route`: how long the client waited (to the body's end; to the first
/// event for the stream) and devhost's Server-Timing header when it sent one. A batch's
/// orders are created before the clock starts.
async fn request(target: &mut Target, route: Route) -> anyhow::Result<(Duration, Option<String>)> {
    let url = |path: &str| format!("{}{path}", target.host.url);
    // A question the rule router sends to the agent (a greeting would be answered without
    // the LLM).
    let chat =
        json!({"message": "How many suppliers are there?", "routing_mode": "rule"}).to_string();
    let builder = match route {
        Route::Live => target.client.get(url("/health/live")),
        Route::Ready => target.client.get(url("/health/ready")),
        Route::Health => target.client.get(url("/health")),
        Route::Tool => target.client.post(url(TOOL)).body(TOOL_BODY),
        Route::Chat0 => {
            target.llm.then([text(ANSWER)]);
            target.client.post(url("/chat")).body(chat)
        }
        Route::Chat4 => {
            let mut script = distinct_statistics_steps(STEPS);
            // After tool calls the summariser writes the answer from the evidence.
            script.push(text("draft"));
            script.push(text(ANSWER));
            target.llm.then(script);
            target.client.post(url("/chat")).body(chat)
        }
        Route::StreamFirst => {
            target.llm.then([text(ANSWER)]);
            target.client.post(url("/chat/stream")).body(chat)
        }
        Route::Batch => {
            target.batches += 1;
            let ids = orders(target).await?;
            target
                .client
                .post(url("/actions/PurchaseOrder/makePayment/execute"))
                .body(json!({"entity_ids": ids}).to_string())
        }
    };
    let started = Instant::now();
    let mut response = builder.send().await?.error_for_status()?;
    let header = server_timing::header(response.headers());
    if route == Route::StreamFirst {
        let mut seen = String::new();
        let mut first = None;
        while let Some(chunk) = response.chunk().await? {
            seen.push_str(&String::from_utf8_lossy(&chunk));
            if first.is_none() && seen.contains("event: conversation_id") {
                first = Some(started.elapsed());
            }
        }
        let first = first.ok_or_else(|| anyhow::anyhow!("no conversation_id event: {seen}"))?;
        return Ok((first, header));
    }
    let body = response.bytes().await?;
    let took = started.elapsed();
    if matches!(route, Route::Chat0 | Route::Chat4) {
        let body: serde_json::Value = serde_json::from_slice(&body)?;
        anyhow::ensure!(body["answer"] == ANSWER, "{}: {body}", route.name());
        anyhow::ensure!(target.llm.remaining() == 0, "{}: script left", route.name());
    }
    if route == Route::Batch {
        let body: serde_json::Value = serde_json::from_slice(&body)?;
        let succeeded = body["succeeded"].as_u64();
        anyhow::ensure!(
            succeeded == Some((BATCH / 5 * PAYABLE_PER_FIVE) as u64),
            "the batch paid {succeeded:?}: {body}"
        );
    }
    Ok((took, header))
}

/// `BATCH` approved orders of their own for one batch, 40 % put back to draft.
async fn orders(target: &Target) -> anyhow::Result<Vec<String>> {
    let prefix = format!("HOSTS-{}", target.batches);
    target
        .graph
        .create_payable_orders(&prefix, BATCH, PAYABLE_PER_FIVE)
        .await
}

/// `CLIENTS` clients calling the tool back to back for `LOAD_TIME`: (requests/s, errors).
async fn load(url: &str) -> (f64, usize) {
    let started = Instant::now();
    let deadline = started + LOAD_TIME;
    let workers = (0..CLIENTS).map(|_| {
        let client = kg_e2e::auth::client(kg_e2e::auth::ADMIN);
        let target = format!("{url}{TOOL}");
        async move {
            let (mut ok, mut errors) = (0usize, 0usize);
            while Instant::now() < deadline {
                match client.post(&target).body(TOOL_BODY).send().await {
                    Ok(r) if r.status().is_success() => {
                        let _ = r.bytes().await;
                        ok += 1;
                    }
                    _ => errors += 1,
                }
            }
            (ok, errors)
        }
    });
    let results = futures::future::join_all(workers).await;
    let elapsed = started.elapsed().as_secs_f64();
    let ok: usize = results.iter().map(|r| r.0).sum();
    let errors: usize = results.iter().map(|r| r.1).sum();
    (ok as f64 / elapsed, errors)
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
