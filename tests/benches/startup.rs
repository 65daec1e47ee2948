//! Start-up (issue #36): how long from starting the host to its first answers, cold (an
//! empty compilation cache: every component compiled) and warm (the same cache again),
//! for `spin up` serving `spin.toml` (Spin composes each component with its dependencies
//! at load time) and the pre-composed `dist/spin.toml` (one component per route, composed
//! by `devhost --compose-into`), and for devhost. Per row: until the host says it listens,
//! until `GET /health/live` answers 200, and until a tool call (the dispatcher and its
//! five dependencies, a graph round trip) answers 200. Both hosts keep compiled components
//! in wasmtime's cache, on by default in `~/.cache/wasmtime`; here a directory of the
//! run's own (`--cache`, a flag of both).
//!
//! Run: `cargo bench -p kg-e2e --bench startup` (Spin from SPIN_BIN or PATH).

use kg_e2e::{AppHost, Graph, HostKind, KeyValue, spin_binary, workspace};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let short = std::env::var("KG_BENCH_SHORT").is_ok_and(|v| v == "1");
    let runs = if short { 1 } else { 3 };
    let graph = Graph::start().await?;
    let scratch = tempfile::tempdir()?;
    // A pre-composed build of this workspace's components, as scripts/test.sh makes dist/.
    let dist = scratch.path().join("dist");
    let composed = std::process::Command::new(kg_e2e::devhost_binary())
        .arg("--manifest")
        .arg(workspace().join("spin.toml"))
        .arg("--compose-into")
        .arg(&dist)
        .status()?;
    anyhow::ensure!(composed.success(), "devhost --compose-into failed");

    let mut cases: Vec<(HostKind, &str, PathBuf)> = Vec::new();
    if spin_binary().is_some() {
        cases.push((HostKind::Spin, "spin.toml", workspace().join("spin.toml")));
        cases.push((HostKind::Spin, "dist/spin.toml", dist.join("spin.toml")));
    } else {
        println!("SKIPPED: no spin binary (SPIN_BIN or PATH): devhost only");
    }
    cases.push((
        HostKind::Devhost,
        "spin.toml",
        workspace().join("spin.toml"),
    ));

    println!("medians of {runs} run(s), ms: listening / GET /health/live 200 / tool call 200");
    println!("| host | manifest | cold | warm |");
    println!("|---|---|---|---|");
    for (kind, name, manifest) in cases {
        let mut cold = Vec::new();
        let mut warm = Vec::new();
        for run in 0..runs {
            let cache = scratch
                .path()
                .join(format!("cache-{}-{run}", cold.len() + warm.len()));
            cold.push(measure(kind, &manifest, &graph, &cache).await?);
            warm.push(measure(kind, &manifest, &graph, &cache).await?);
        }
        println!(
            "| {} | {name} | {} | {} |",
            kind.name(),
            row(&mut cold),
            row(&mut warm)
        );
    }
    graph.stop().await?;
    Ok(())
}

/// (listening, live, tool call) after the start, with the compilation cache in `cache`.
async fn measure(
    kind: HostKind,
    manifest: &Path,
    graph: &Graph,
    cache: &Path,
) -> anyhow::Result<[Duration; 3]> {
    std::fs::create_dir_all(cache)?;
    let config = cache.with_extension("toml");
    std::fs::write(
        &config,
        format!("[cache]\ndirectory = {:?}\n", cache.display().to_string()),
    )?;
    let config = config.display().to_string();
    // devhost takes the same flag (and the same wasmtime cache format).
    let flags = ["--cache", config.as_str()];
    let dir = tempfile::tempdir()?;
    let kv = KeyValue::File(dir.path().join("kv.db"));
    let started = Instant::now();
    let host =
        AppHost::start_with_host_flags(kind, manifest, &kv, &graph.variables(), &flags).await?;
    let listening = started.elapsed();
    let client = kg_e2e::auth::client(kg_e2e::auth::ADMIN);
    until_ok(|| client.get(format!("{}/health/live", host.url))).await?;
    let live = started.elapsed();
    until_ok(|| {
        client
            .post(format!("{}/tools/get_node_statistics", host.url))
            .body(r#"{"label": "Supplier"}"#)
    })
    .await?;
    let tool = started.elapsed();
    host.stop().await?;
    Ok([listening, live, tool])
}

/// Sends until the answer is 200 (every 10 ms, 60 s at most).
async fn until_ok(request: impl Fn() -> reqwest::RequestBuilder) -> anyhow::Result<()> {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(60) {
        if let Ok(r) = request().send().await
            && r.status().is_success()
        {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    anyhow::bail!("no 200 within 60 s")
}

fn row(samples: &mut [[Duration; 3]]) -> String {
    let median = |i: usize| {
        let mut v: Vec<Duration> = samples.iter().map(|s| s[i]).collect();
        v.sort();
        v[v.len() / 2].as_secs_f64() * 1000.0
    };
    format!("{:.0} / {:.0} / {:.0}", median(0), median(1), median(2))
}
