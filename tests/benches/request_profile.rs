//! Where one request's time goes, on devhost with `--server-timing` (devtools/devhost/src/
//! timing.rs) and an LLM stub that answers at once: per kind of request, the medians of
//! what the client waited, the host's per-request set-up, the instantiation of the
//! composed application, the component's handler, and inside the handler the key-value
//! reads and writes, the graph round trips, the LLM round trips, the components' own
//! compute (time inside the Wasm code: their logic, the WIT calls between the composed
//! components, JSON; `scripts/bench.sh --perf` splits it further) and the rest (other host
//! calls — WASI clocks, files, log output — and waiting to be scheduled). Then the host's
//! floor for an agent step: what a component that sends only the turns' LLM and graph
//! requests (`benches/step-floor`) costs per step on the same host, measured the same way.
//!
//! Run: `cargo bench -p kg-e2e --bench request_profile` (or `scripts/bench.sh`);
//! `KG_BENCH_SHORT=1` for fewer runs.

use kg_e2e::bench_results::record;
use kg_e2e::llm_stub::{ScriptedLlm, distinct_statistics_steps, text};
use kg_e2e::{Stack, server_timing};
use serde_json::json;
use std::collections::BTreeMap;
use std::time::Instant;

const STEPS: usize = 4;
/// Requests of each kind sent first and not counted (a code path's first use touches fresh
/// pages).
const WARM_UP: usize = 5;
/// [`profile_interleaved`]'s blocks: requests of one kind in a row, and how many of them
/// settle what the other kind left behind before any is counted.
const BLOCK: usize = 12;
const BLOCK_SETTLE: usize = 2;

/// One request's breakdown, in ms (counts as counts).
#[derive(Default, Clone)]
struct Sample {
    client: f64,
    metrics: BTreeMap<&'static str, f64>,
}

fn main() -> anyhow::Result<()> {
    // SAFETY: set before the runtime starts any thread; devhost (a child) inherits it.
    unsafe { std::env::set_var("DEVHOST_SERVER_TIMING", "on") };
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(run())
}

async fn run() -> anyhow::Result<()> {
    let short = std::env::var("KG_BENCH_SHORT").is_ok_and(|v| v == "1");
    let runs = if short { 20 } else { 200 };
    let llm = ScriptedLlm::start().await;
    let stack = Stack::start_with(&llm.variables()).await?;
    kg_e2e::auth::client(kg_e2e::auth::ADMIN)
        .post(format!("{}/actions/setup", stack.host.url))
        .send()
        .await?
        .error_for_status()?;
    let graph_origin = stack.graph.url.trim_end_matches('/').to_string();
    let llm_origin = llm.server.uri().trim_end_matches('/').to_string();
    let origins = Origins {
        graph: graph_origin,
        llm: llm_origin,
    };
    let client = kg_e2e::auth::client(kg_e2e::auth::ADMIN);
    let base = stack.host.url.clone();

    let mut table = Vec::new();
    // Warm up each path once (first use of a code path touches fresh pages).
    let health = profile(runs, &origins, || {
        client.get(format!("{base}/health/live")).send()
    })
    .await?;
    table.push(("GET /health/live", health));

    let question = json!({"message": "How many suppliers are there?", "routing_mode": "rule"});
    let chat = |steps: usize| {
        let mut script = distinct_statistics_steps(steps);
        // A ReAct step that calls no tool is the answer itself; after tool calls the
        // summariser writes the answer from the evidence.
        if steps > 0 {
            script.push(text("draft"));
        }
        script.push(text("There are 10 suppliers."));
        script
    };
    let send_chat = |steps: usize| {
        llm.then(chat(steps));
        client
            .post(format!("{base}/chat"))
            .body(question.to_string())
            .send()
    };
    let (zero, four) =
        profile_interleaved(runs, &origins, || send_chat(0), || send_chat(STEPS)).await?;
    table.push(("POST /chat, no tool step", zero));
    table.push(("POST /chat, 4 tool steps", four));

    let ids = stack
        .graph
        .create_approved_orders("PROFILE", runs + 5, 1.0)
        .await?;
    let next = std::sync::atomic::AtomicUsize::new(0);
    let pay = profile(runs, &origins, || {
        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let id = ids[i % ids.len()].clone();
        client
            .post(format!("{base}/actions/PurchaseOrder/makePayment/execute"))
            .body(json!({"entity_ids": [id]}).to_string())
            .send()
    })
    .await?;
    table.push(("POST makePayment, 1 order", pay));

    print_table(&table);
    print_per_step(&table[1].1, &table[2].1)?;
    step_floor(runs, &llm, &origins, &table[1].1, &table[2].1).await?;

    record("chat0.client_ms", median(&table[1].1, "client"))?;
    record("turn4.graph_round_trips", median(&table[2].1, "graph_n"))?;
    let slowest_instantiation = table
        .iter()
        .map(|(_, samples)| median(samples, "instantiate"))
        .fold(0.0, f64::max);
    record("instantiate.slowest_median_ms", slowest_instantiation)?;
    Ok(())
}

/// One step's share of what the 0-step and the 4-step turns measured: the 4-step turn's
/// median minus the 0-step one's, / STEPS. The application's step and the step floor are
/// both read through it, so the two are measured the same way.
struct PerStep<'a> {
    zero: &'a [Sample],
    four: &'a [Sample],
}

impl PerStep<'_> {
    fn of(&self, key: &str) -> f64 {
        (median(self.four, key) - median(self.zero, key)) / STEPS as f64
    }

    /// The step's graph and LLM round trips (the LLM stub's and devgraph's own time on the
    /// wire, as devhost times them), from the medians of each request's sum.
    fn round_trips(&self) -> f64 {
        let round_trips = |s: &Sample| get(s, "graph") + get(s, "llm");
        (median_of(self.four, round_trips) - median_of(self.zero, round_trips)) / STEPS as f64
    }
}

/// A step's cost: the 4-step turn minus the 0-step one, / STEPS, at the client, less the
/// step's graph and LLM round trips, and how much of that is the components' own compute
/// and the host's answers to their calls.
fn print_per_step(zero: &[Sample], four: &[Sample]) -> anyhow::Result<()> {
    let step = PerStep { zero, four };
    let step_round_trips = step.round_trips();
    let (client, components, host, calls, blocked) = (
        step.of("client"),
        step.of("wasm"),
        step.of("host"),
        step.of("host_n"),
        step.of("blocked"),
    );
    // The round trips are timed by devhost from the send to the response, so they overlap
    // the host calls that send and read them: the split below uses the handler's own
    // accounting instead (in the components, in host calls, blocked), which does not.
    println!(
        "\nper agent step (4-step /chat minus 0-step /chat, / {STEPS}): {client:.3} ms at the client; \
         less its graph and LLM round trips ({step_round_trips:.3} ms): {:.3} ms. Split without \
         overlap: the components' own compute {components:.3} ms, the host's answers to \
         {calls:.0} host calls {host:.3} ms, blocked on the graph and LLM {blocked:.3} ms, the \
         rest (HTTP, scheduling) {:.3} ms",
        client - step_round_trips,
        client - components - host - blocked
    );
    record("step.client_ms", client)?;
    record("step.round_trips_ms", step_round_trips)?;
    record("step.components_ms", components)?;
    record("step.host_calls_ms", host)?;
    record("step.host_calls_n", calls)?;
    record("step.blocked_ms", blocked)?;
    Ok(())
}

/// The host's floor for a step: `benches/step-floor`, a component that sends only the
/// turns' requests (as many LLM and graph requests as the application's 0- and 4-step
/// turns sent; the LLM's of the mean size the application's had in this run, the graph's
/// the request the step's tool sends) with the fewest WASI calls, on a devhost of its own
/// started like the application's. Read through [`PerStep`] as [`print_per_step`] reads
/// the application's: what is left at the client after its round trips is what any
/// component pays this host for a step's I/O.
async fn step_floor(
    runs: usize,
    llm: &ScriptedLlm,
    origins: &Origins,
    app_zero: &[Sample],
    app_four: &[Sample],
) -> anyhow::Result<()> {
    use base64::Engine as _;
    let manifest = kg_e2e::workspace().join("benches/step-floor/spin.toml");
    let component = kg_e2e::workspace().join("target/wasm32-wasip2/component/kg_step_floor.wasm");
    anyhow::ensure!(
        component.exists(),
        "{} is not built: cargo build --profile component --target wasm32-wasip2 -p \
         kg-step-floor (scripts/bench.sh builds it)",
        component.display()
    );
    let state = tempfile::tempdir()?;
    let floor = kg_e2e::AppHost::start_devhost_with_flags(
        &manifest,
        &kg_e2e::KeyValue::File(state.path().join("kv.db")),
        &[],
        &[],
    )
    .await?;
    let requests = llm.requests();
    let llm_bytes = requests
        .iter()
        .map(|r| serde_json::to_vec(r).map_or(0, |b| b.len()))
        .sum::<usize>()
        / requests.len().max(1);
    let authorization = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD
            .encode(format!("neo4j:{}", kg_e2e::GRAPH_PASSWORD))
    );
    // The request the step's tool sends (get_node_statistics' count), field for field as
    // neo4j-client writes it.
    let graph_body = json!({
        "statement": "MATCH (n:`Supplier`) RETURN count(n) AS count LIMIT 1",
        "parameters": {},
        "accessMode": "READ",
        "maxExecutionTime": 9,
    })
    .to_string();
    let client = reqwest::Client::new();
    // As many LLM and graph requests as the application's turns sent (the 4-step turn's
    // LLM calls include the summariser's).
    let counts = |samples: &[Sample]| {
        let n = |key| median(samples, key).round() as usize;
        (n("llm_n"), n("graph_n"))
    };
    let send = |(llm_requests, graph_requests): (usize, usize)| {
        llm.then((0..llm_requests).map(|_| text("ok")));
        client
            .post(format!("{}/floor", floor.url))
            .header("x-floor-llm-requests", llm_requests.to_string())
            .header("x-floor-graph-requests", graph_requests.to_string())
            .header(
                "x-floor-llm-url",
                format!("{}/v1/chat/completions", origins.llm),
            )
            .header("x-floor-llm-bytes", llm_bytes.to_string())
            .header(
                "x-floor-graph-url",
                format!("{}/db/neo4j/query/v2", origins.graph),
            )
            .header("x-floor-graph-authorization", authorization.as_str())
            .body(graph_body.clone())
            .send()
    };
    // A failed request says why (profile() would only report the status).
    let (zero_counts, four_counts) = (counts(app_zero), counts(app_four));
    let first = send(four_counts).await?;
    let status = first.status();
    let text = first.text().await?;
    anyhow::ensure!(
        status.is_success(),
        "the step floor answered {status}: {text}"
    );
    let (zero, four) =
        profile_interleaved(runs, origins, || send(zero_counts), || send(four_counts)).await?;
    println!();
    print_table(&[
        ("step floor, the 0-step turn's requests", zero.clone()),
        ("step floor, the 4-step turn's requests", four.clone()),
    ]);
    let step = PerStep {
        zero: &zero,
        four: &four,
    };
    let step_round_trips = step.round_trips();
    let at_client = step.of("client") - step_round_trips;
    println!(
        "\nthe host's floor for a step (benches/step-floor: only the turns' requests, \
         {}+{} and {}+{} LLM+graph like the application's 0- and 4-step turns, LLM requests of \
         {llm_bytes} bytes, the graph's statement; on a devhost of its own): {:.3} ms at the \
         client; less its round trips ({step_round_trips:.3} ms): \
         {at_client:.3} ms, of it {:.3} ms in {:.0} host calls and {:.3} ms in the component",
        zero_counts.0,
        zero_counts.1,
        four_counts.0,
        four_counts.1,
        step.of("client"),
        step.of("host"),
        step.of("host_n"),
        step.of("wasm"),
    );
    record("step.floor_ms", at_client)?;
    record("step.floor_host_calls_n", step.of("host_n"))?;
    floor.stop().await?;
    Ok(())
}

struct Origins {
    graph: String,
    llm: String,
}

/// Sends `runs` requests one after another (after 5 unmeasured ones) and collects the
/// client's time and the `Server-Timing` metrics of each.
async fn profile<F, Fut>(runs: usize, origins: &Origins, send: F) -> anyhow::Result<Vec<Sample>>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = reqwest::Result<reqwest::Response>>,
{
    let mut samples = Vec::with_capacity(runs);
    for i in 0..runs + WARM_UP {
        let sample = sample(origins, send()).await?;
        if i >= WARM_UP {
            samples.push(sample);
        }
    }
    Ok(samples)
}

/// Two kinds of request in alternating blocks of [`BLOCK`] (`runs` of each counted, after
/// the warm-up), so both see the same minutes of a VM whose speed drifts: a step is the
/// difference of the two kinds' medians, and measured as one block of 200 after the other,
/// a drift between the blocks moved it by as much as the difference itself. The first
/// [`BLOCK_SETTLE`] requests of each block are not counted: a request right after one of
/// the other kind pays for what that one left behind (a 0-step turn right after a 4-step
/// one is slower: in three paired runs, strict alternation made a step look about 0.05 ms
/// cheaper than one block after the other did, the cost moved onto the 0-step turn).
async fn profile_interleaved<A, FutA, B, FutB>(
    runs: usize,
    origins: &Origins,
    send_a: A,
    send_b: B,
) -> anyhow::Result<(Vec<Sample>, Vec<Sample>)>
where
    A: Fn() -> FutA,
    FutA: std::future::Future<Output = reqwest::Result<reqwest::Response>>,
    B: Fn() -> FutB,
    FutB: std::future::Future<Output = reqwest::Result<reqwest::Response>>,
{
    for _ in 0..WARM_UP {
        sample(origins, send_a()).await?;
        sample(origins, send_b()).await?;
    }
    let (mut a, mut b) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
    while a.len() < runs || b.len() < runs {
        block(origins, &send_a, &mut a, runs).await?;
        block(origins, &send_b, &mut b, runs).await?;
    }
    Ok((a, b))
}

/// One of [`profile_interleaved`]'s blocks: [`BLOCK`] requests, those after the first
/// [`BLOCK_SETTLE`] added to `samples` until it holds `runs`.
async fn block<F, Fut>(
    origins: &Origins,
    send: &F,
    samples: &mut Vec<Sample>,
    runs: usize,
) -> anyhow::Result<()>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = reqwest::Result<reqwest::Response>>,
{
    for i in 0..BLOCK {
        let sample = sample(origins, send()).await?;
        if i >= BLOCK_SETTLE && samples.len() < runs {
            samples.push(sample);
        }
    }
    Ok(())
}

/// One request: what the client waited (to its body's last byte) and devhost's
/// Server-Timing.
async fn sample(
    origins: &Origins,
    request: impl std::future::Future<Output = reqwest::Result<reqwest::Response>>,
) -> anyhow::Result<Sample> {
    let started = Instant::now();
    let response = request.await?.error_for_status()?;
    let header = server_timing::header(response.headers()).unwrap_or_default();
    response.bytes().await?;
    let client = started.elapsed().as_secs_f64() * 1_000.0;
    let metrics = parse(&header, origins);
    anyhow::ensure!(
        metrics.contains_key("instantiate"),
        "no Server-Timing from devhost (is it built with --server-timing?): {header:?}"
    );
    Ok(Sample { client, metrics })
}

/// devhost's metrics, outbound calls sorted into graph, LLM and other by origin; `rest` is
/// the handler's time neither in the components nor in the host calls measured.
fn parse(header: &str, origins: &Origins) -> BTreeMap<&'static str, f64> {
    let mut m = BTreeMap::new();
    for entry in server_timing::entries(header) {
        let (name, dur) = (entry.name, entry.dur_ms);
        let (time_key, count_key) = match name {
            "store" | "instantiate" | "handler" | "wasm" | "queued" | "response-queued" => {
                m.insert(static_name(name), dur);
                continue;
            }
            "host" => ("host", "host_n"),
            "blocked" => ("blocked", "blocked_n"),
            "kv-read" => ("kv_read", "kv_read_n"),
            "kv-write" => ("kv_write", "kv_write_n"),
            _ if entry.is_outbound_to(&origins.graph) => ("graph", "graph_n"),
            _ if entry.is_outbound_to(&origins.llm) => ("llm", "llm_n"),
            "outbound" => ("other", "other_n"),
            _ => continue,
        };
        *m.entry(time_key).or_insert(0.0) += dur;
        *m.entry(count_key).or_insert(0.0) += entry.count();
    }
    let host: f64 = ["kv_read", "kv_write", "graph", "llm", "other"]
        .iter()
        .filter_map(|k| m.get(k))
        .sum();
    let handler = m.get("handler").copied().unwrap_or(0.0);
    let wasm = m.get("wasm").copied().unwrap_or(0.0);
    m.insert("rest", (handler - host - wasm).max(0.0));
    // The handler split by how its future spent the time (devhost's src/polled.rs): what
    // is left is time outside the handler's polls the split does not see.
    let split: f64 = ["wasm", "host", "blocked", "queued", "response_queued"]
        .iter()
        .filter_map(|k| m.get(k))
        .sum();
    m.insert("unsplit", handler - split);
    m
}

fn static_name(name: &str) -> &'static str {
    match name {
        "store" => "store",
        "instantiate" => "instantiate",
        "wasm" => "wasm",
        "queued" => "queued",
        "response-queued" => "response_queued",
        _ => "handler",
    }
}

fn median(samples: &[Sample], key: &str) -> f64 {
    let mut values: Vec<f64> = samples
        .iter()
        .map(|s| {
            if key == "client" {
                s.client
            } else {
                s.metrics.get(key).copied().unwrap_or(0.0)
            }
        })
        .collect();
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}

fn print_table(table: &[(&str, Vec<Sample>)]) {
    println!(
        "one request, medians in ms over {} runs (n = calls per request), devhost --server-timing:",
        table.first().map_or(0, |t| t.1.len())
    );
    println!(
        "| request | client | host set-up | instantiate | handler | own compute (Wasm: logic, WIT, JSON) | KV reads | KV writes | graph round trips | LLM round trips | rest (other host calls, scheduling) |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (name, samples) in table {
        let m = |k: &str| median(samples, k);
        let counted = |t: &str, n: &str| format!("{:.3} (n={:.0})", m(t), m(n));
        println!(
            "| {name} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {} | {} | {} | {} | {:.3} |",
            m("client"),
            m("store"),
            m("instantiate"),
            m("handler"),
            m("wasm"),
            counted("kv_read", "kv_read_n"),
            counted("kv_write", "kv_write_n"),
            counted("graph", "graph_n"),
            counted("llm", "llm_n"),
            m("rest"),
        );
    }
    println!(
        "\nthe handler by how it spent its time (medians, ms): in the components, host calls \
         answering at once (n = calls), blocked until woken (n = waits; outbound responses, \
         body frames, timers), woken but waiting for a worker, the response set but not yet \
         taken by the server (the component runs on until its first wait: a streamed turn \
         goes on after its headers), and what this split does not see:"
    );
    println!(
        "| request | handler | own compute | host calls | of it KV | blocked | of it graph + LLM | queued | response queued | unsplit |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (name, samples) in table {
        let m = |k: &str| median(samples, k);
        let kv = median_of(samples, |s| get(s, "kv_read") + get(s, "kv_write"));
        let round_trips = median_of(samples, |s| get(s, "graph") + get(s, "llm"));
        println!(
            "| {name} | {:.3} | {:.3} | {:.3} (n={:.0}) | {kv:.3} | {:.3} (n={:.0}) | {round_trips:.3} | {:.3} | {:.3} | {:.3} |",
            m("handler"),
            m("wasm"),
            m("host"),
            m("host_n"),
            m("blocked"),
            m("blocked_n"),
            m("queued"),
            m("response_queued"),
            m("unsplit"),
        );
    }
}

fn get(sample: &Sample, key: &str) -> f64 {
    sample.metrics.get(key).copied().unwrap_or(0.0)
}

fn median_of(samples: &[Sample], f: impl Fn(&Sample) -> f64) -> f64 {
    let mut values: Vec<f64> = samples.iter().map(f).collect();
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}
