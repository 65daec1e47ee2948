//! The Python router of `examples/router-python/` (componentize-py) next to our Rust router
//! (components/router), in one run on one machine (issue #38 item 2): each plugged into
//! spin.toml's `kg:router/router@0.1.0` dependency the same way (tests/src/swapped_router.rs).
//!
//! - The component's size, and what one dispatcher request instantiates with it
//!   (`devhost --footprint`: every request to the dispatcher instantiates all five
//!   dependencies, the router's included, whether it calls the router or not).
//! - Start-up with each, cold (an empty compilation cache of the run's own) and warm (the
//!   same cache again): until the host says it listens, until a tool call answers 200.
//! - Per request, both applications up at once against one graph, requests interleaved
//!   (one to each, alternately first): a 0-step `/chat` (a question the router sends to the
//!   agent, one scripted LLM call), which calls the router, and a query tool call, which
//!   does not (the dispatcher and its dependencies are instantiated all the same): median,
//!   p90 and p99 at the client.
//! - devhost's `Server-Timing` `instantiate` (store set-up and instantiation of the
//!   dispatcher with its dependencies) per request with each, and each host's resident
//!   memory after the requests.
//!
//! Run: `cargo bench -p kg-e2e --bench swapped_router` (Spin from SPIN_BIN or PATH; devhost
//! only without one); `KG_BENCH_SHORT=1` for fewer samples. Needs python3 with venv and PyPI
//! (examples/router-python/build.sh).

use kg_e2e::llm_stub::{ScriptedLlm, text};
use kg_e2e::swapped_router::{manifest_with_router, python_router};
use kg_e2e::{AppHost, Graph, HostKind, KeyValue, server_timing, spin_binary, startup, workspace};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const ANSWER: &str = "There are 10 suppliers.";
const TOOL: &str = "/tools/get_node_statistics";
const TOOL_BODY: &str = r#"{"label": "Supplier"}"#;

struct Router {
    name: &'static str,
    wasm: PathBuf,
    manifest: PathBuf,
}

#[derive(Clone, Copy, PartialEq)]
enum Route {
    Chat0,
    Tool,
}

impl Route {
    fn name(self) -> &'static str {
        match self {
            Route::Chat0 => "/chat, 0 steps (calls the router)",
            Route::Tool => "tool call (no router call)",
        }
    }
}

/// One application being measured: its host and LLM stub.
struct App {
    host: AppHost,
    llm: ScriptedLlm,
    client: reqwest::Client,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let short = std::env::var("KG_BENCH_SHORT").is_ok_and(|v| v == "1");
    let (samples, startups) = if short { (30, 1) } else { (100, 3) };
    let scratch = tempfile::tempdir()?;
    let (python, build) = python_router().await?;
    println!(
        "examples/router-python/build.sh: {:.1} s (0 when nothing changed)",
        build.as_secs_f64()
    );
    let mut routers = Vec::new();
    for (name, wasm) in [
        (
            "rust (components/router)",
            workspace().join("target/wasm32-wasip2/component/kg_router.wasm"),
        ),
        ("python (examples/router-python)", python),
    ] {
        let dir = scratch.path().join(routers.len().to_string());
        std::fs::create_dir_all(&dir)?;
        let manifest = manifest_with_router(&dir, &wasm)?;
        routers.push(Router {
            name,
            wasm,
            manifest,
        });
    }

    println!();
    println!(
        "| router | component bytes | per dispatcher request: core instances / memories / tables |"
    );
    println!("|---|---|---|");
    for router in &routers {
        let size = std::fs::metadata(&router.wasm)?.len();
        let f = footprint(&router.manifest).await?;
        println!(
            "| {} | {size} | {} / {} / {} |",
            router.name, f["core_instances"], f["memories"], f["tables"]
        );
    }

    let graph = Graph::start().await?;
    let kind = match spin_binary() {
        Some(path) => {
            println!("\nspin: {}", path.display());
            HostKind::Spin
        }
        None => {
            println!("\nSKIPPED: no spin binary (SPIN_BIN or PATH): devhost only");
            HostKind::Devhost
        }
    };

    println!(
        "\nstart-up on {}, ms, median of {startups}: listening / tool call 200",
        kind.name()
    );
    println!("| router | cold (empty cache) | warm (same cache) |");
    println!("|---|---|---|");
    for (i, router) in routers.iter().enumerate() {
        let (mut cold, mut warm) = (Vec::new(), Vec::new());
        for run in 0..startups {
            let cache = scratch.path().join(format!("cache-{i}-{run}"));
            // The same start-up twice on one cache: the first compiles (cold), the second
            // finds the compiled components (warm).
            let start = || {
                startup::measure(
                    kind,
                    &router.manifest,
                    &graph,
                    &cache,
                    Duration::from_secs(120),
                )
            };
            cold.push(listening_and_tool(start().await?));
            warm.push(listening_and_tool(start().await?));
        }
        println!(
            "| {} | {} | {} |",
            router.name,
            startup_row(&mut cold),
            startup_row(&mut warm)
        );
    }

    // Both applications up at once, requests interleaved.
    let mut apps = Vec::new();
    for router in &routers {
        apps.push(start(kind, &router.manifest, &graph, &[]).await?);
    }
    println!(
        "\nper request on {}, ms at the client, {samples} interleaved samples each: median / p90 / p99",
        kind.name()
    );
    println!(
        "| route | {} | {} | python - rust (median) |",
        routers[0].name, routers[1].name
    );
    println!("|---|---|---|---|");
    for route in [Route::Chat0, Route::Tool] {
        let mut times = interleaved(&mut apps, route, samples).await?;
        let medians: Vec<f64> = times.iter_mut().map(|t| quantile(t, 0.5)).collect();
        let cells: Vec<String> = times
            .iter_mut()
            .map(|t| {
                format!(
                    "{:.2} / {:.2} / {:.2}",
                    quantile(t, 0.5),
                    quantile(t, 0.9),
                    quantile(t, 0.99)
                )
            })
            .collect();
        println!(
            "| {} | {} | {} | {:+.2} |",
            route.name(),
            cells[0],
            cells[1],
            medians[1] - medians[0]
        );
    }
    for (router, app) in routers.iter().zip(&apps) {
        let rss = app
            .host
            .rss_kib()
            .map_or("?".into(), |k| format!("{:.0} MiB", k as f64 / 1024.0));
        println!(
            "{} RSS after the requests, {}: {rss}",
            kind.name(),
            router.name
        );
    }
    for app in apps {
        app.host.stop().await?;
    }

    // devhost's own account of instantiation, per request.
    let mut apps = Vec::new();
    for router in &routers {
        apps.push(
            start(
                HostKind::Devhost,
                &router.manifest,
                &graph,
                &["--server-timing", "on"],
            )
            .await?,
        );
    }
    println!(
        "\ndevhost Server-Timing per tool call, ms, {samples} interleaved samples each: median / p90"
    );
    println!("| router | store + instantiate | handler |");
    println!("|---|---|---|");
    let mut timings = vec![(Vec::new(), Vec::new()); apps.len()];
    for i in 0..samples + 5 {
        for (j, app) in order(&mut apps, i) {
            let response = app
                .client
                .post(format!("{}{TOOL}", app.host.url))
                .body(TOOL_BODY)
                .send()
                .await?
                .error_for_status()?;
            let header = server_timing::header(response.headers())
                .ok_or_else(|| anyhow::anyhow!("no Server-Timing from devhost"))?;
            response.bytes().await?;
            if i < 5 {
                continue;
            }
            let metric = |name: &str| {
                server_timing::entries(&header)
                    .filter(|e| e.name == name)
                    .map(|e| e.dur_ms)
                    .sum::<f64>()
            };
            timings[j].0.push(metric("store") + metric("instantiate"));
            timings[j].1.push(metric("handler"));
        }
    }
    for (router, (instantiate, handler)) in routers.iter().zip(&mut timings) {
        println!(
            "| {} | {:.3} / {:.3} | {:.3} / {:.3} |",
            router.name,
            quantile(instantiate, 0.5),
            quantile(instantiate, 0.9),
            quantile(handler, 0.5),
            quantile(handler, 0.9)
        );
    }
    for app in apps {
        app.host.stop().await?;
    }
    graph.stop().await?;
    Ok(())
}

/// `devhost --footprint json`'s line for the dispatcher.
async fn footprint(manifest: &Path) -> anyhow::Result<Value> {
    let output = tokio::process::Command::new(kg_e2e::devhost_binary())
        .arg("--manifest")
        .arg(manifest)
        .args(["--footprint", "json"])
        .output()
        .await?;
    anyhow::ensure!(
        output.status.success(),
        "devhost --footprint: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)?
        .lines()
        .map(serde_json::from_str::<Value>)
        .find(|line| line.as_ref().is_ok_and(|l| l["component"] == "dispatcher"))
        .ok_or_else(|| anyhow::anyhow!("no dispatcher in devhost --footprint"))?
        .map_err(Into::into)
}

async fn start(
    kind: HostKind,
    manifest: &Path,
    graph: &Graph,
    flags: &[&str],
) -> anyhow::Result<App> {
    let llm = ScriptedLlm::start().await;
    let dir = tempfile::tempdir()?;
    let kv = KeyValue::File(dir.keep().join("kv.db"));
    let mut variables = graph.variables();
    variables.extend(llm.variables());
    let host = AppHost::start_with_host_flags(kind, manifest, &kv, &variables, flags).await?;
    Ok(App {
        host,
        llm,
        client: kg_e2e::auth::client(kg_e2e::auth::ADMIN),
    })
}

/// The (listening, tool call 200) of a start-up measurement.
fn listening_and_tool([listening, _, tool]: [Duration; 3]) -> [Duration; 2] {
    [listening, tool]
}

fn startup_row(samples: &mut [[Duration; 2]]) -> String {
    let median = |i: usize| {
        let mut v: Vec<Duration> = samples.iter().map(|s| s[i]).collect();
        v.sort();
        v[v.len() / 2].as_secs_f64() * 1000.0
    };
    format!("{:.0} / {:.0}", median(0), median(1))
}

/// The apps in the order of round `i`: alternately the first one first and last.
fn order(apps: &mut [App], i: usize) -> Vec<(usize, &mut App)> {
    let mut ordered: Vec<(usize, &mut App)> = apps.iter_mut().enumerate().collect();
    if i % 2 == 1 {
        ordered.reverse();
    }
    ordered
}

/// `n` timed requests of `route` to each app (after a warm-up of a tenth as many, at least
/// 2), one to each in turn: per app, the times in ms.
async fn interleaved(apps: &mut [App], route: Route, n: usize) -> anyhow::Result<Vec<Vec<f64>>> {
    let warm_up = (n / 10).max(2);
    let mut times = vec![Vec::with_capacity(n); apps.len()];
    for i in 0..warm_up + n {
        for (j, app) in order(apps, i) {
            let took = request(app, route).await?;
            if i >= warm_up {
                times[j].push(took.as_secs_f64() * 1000.0);
            }
        }
    }
    Ok(times)
}

/// One request of `route`, timed to the body's end; a 0-step turn is checked.
async fn request(app: &App, route: Route) -> anyhow::Result<Duration> {
    let url = format!(
        "{}{}",
        app.host.url,
        match route {
            Route::Chat0 => "/chat",
            Route::Tool => TOOL,
        }
    );
    let body = match route {
        // Both routers send it to the agent (intent query), which asks the LLM once.
        Route::Chat0 => {
            app.llm.then([text(ANSWER)]);
            json!({"message": "How many suppliers are there?", "routing_mode": "rule"}).to_string()
        }
        Route::Tool => TOOL_BODY.to_string(),
    };
    let started = Instant::now();
    let response = app
        .client
        .post(url)
        .body(body)
        .send()
        .await?
        .error_for_status()?;
    let body = response.bytes().await?;
    let took = started.elapsed();
    if route == Route::Chat0 {
        let body: Value = serde_json::from_slice(&body)?;
        anyhow::ensure!(body["answer"] == ANSWER, "0-step /chat: {body}");
        anyhow::ensure!(body["route"]["intent"] == "query", "0-step /chat: {body}");
        anyhow::ensure!(app.llm.remaining() == 0, "0-step /chat: script left");
    }
    Ok(took)
}

fn quantile(samples: &mut [f64], q: f64) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[((samples.len() as f64 - 1.0) * q).round() as usize]
}
