//! devhost and real Spin side by side, in one run on one machine, serving the same
//! `.wasm` files against the same kind of graph and an instant scripted LLM:
//! median and p99 of `GET /health`, one query tool call and a 0-step `/chat`; requests
//! per second of the tool call at 16 concurrent clients for 10 s (127.0.0.1 only, bounded
//! in time); and each host's resident memory after its run.
//! Run: `cargo bench -p kg-e2e --bench hosts` (Spin from SPIN_BIN or PATH; devhost only
//! without one).

use kg_e2e::llm_stub::{ScriptedLlm, text};
use kg_e2e::{AppHost, Graph, HostKind, KeyValue, app_manifest, spin_binary};
use std::time::{Duration, Instant};

const SEQUENTIAL: usize = 300;
const CLIENTS: usize = 16;
const LOAD_TIME: Duration = Duration::from_secs(10);
const TOOL: &str = "/tools/get_node_statistics";
const TOOL_BODY: &str = r#"{"label": "PurchaseOrder"}"#;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut kinds = vec![HostKind::Devhost];
    match spin_binary() {
        Some(path) => {
            println!("spin: {}", path.display());
            kinds.push(HostKind::Spin);
        }
        None => println!("SKIPPED: no spin binary (SPIN_BIN or PATH): devhost only"),
    }
    println!(
        "| host | GET /health median / p99 | tool call median / p99 | 0-step /chat median / p99 | tool calls/s at {CLIENTS} clients (errors) | RSS after |"
    );
    println!("|---|---|---|---|---|---|");
    for kind in kinds {
        let row = measure(kind).await?;
        println!("{row}");
    }
    Ok(())
}

async fn measure(kind: HostKind) -> anyhow::Result<String> {
    let graph = Graph::start().await?;
    let llm = ScriptedLlm::start().await;
    llm.then((0..SEQUENTIAL + 50).map(|_| text("Hello!")));
    let dir = tempfile::tempdir()?;
    let mut variables = graph.variables();
    variables.extend(llm.variables());
    let host = AppHost::start_on(
        kind,
        &app_manifest(),
        &KeyValue::File(dir.path().join("kv.db")),
        &variables,
    )
    .await?;
    let client = kg_e2e::auth::client(kg_e2e::auth::ADMIN);
    let health = sequential(|| client.get(format!("{}/health", host.url))).await?;
    let tool = sequential(|| client.post(format!("{}{TOOL}", host.url)).body(TOOL_BODY)).await?;
    let chat = sequential(|| {
        client
            .post(format!("{}/chat", host.url))
            .body(r#"{"message": "hello", "routing_mode": "rule"}"#)
    })
    .await?;
    let (rate, errors) = load(&host.url).await;
    let rss = host
        .rss_kib()
        .map_or("?".into(), |k| format!("{:.0} MiB", k as f64 / 1024.0));
    Ok(format!(
        "| {} | {} | {} | {} | {rate:.0} ({errors}) | {rss} |",
        kind.name(),
        health,
        tool,
        chat
    ))
}

/// Sequential requests after a warm-up: "median / p99" in ms.
async fn sequential(request: impl Fn() -> reqwest::RequestBuilder) -> anyhow::Result<String> {
    for _ in 0..10 {
        request().send().await?.error_for_status()?.bytes().await?;
    }
    let mut samples = Vec::with_capacity(SEQUENTIAL);
    for _ in 0..SEQUENTIAL - 10 {
        let started = Instant::now();
        request().send().await?.error_for_status()?.bytes().await?;
        samples.push(started.elapsed());
    }
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize];
    Ok(format!("{:.2} / {:.2} ms", ms(at(0.5)), ms(at(0.99))))
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

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
