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

use kg_e2e::{Graph, HostKind, spin_binary, startup, workspace};
use std::path::PathBuf;
use std::time::Duration;

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
            cold.push(
                startup::measure(kind, &manifest, &graph, &cache, Duration::from_secs(60)).await?,
            );
            warm.push(
                startup::measure(kind, &manifest, &graph, &cache, Duration::from_secs(60)).await?,
            );
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

fn row(samples: &mut [[Duration; 3]]) -> String {
    let median = |i: usize| {
        let mut v: Vec<Duration> = samples.iter().map(|s| s[i]).collect();
        v.sort();
        v[v.len() / 2].as_secs_f64() * 1000.0
    };
    format!("{:.0} / {:.0} / {:.0}", median(0), median(1), median(2))
}
