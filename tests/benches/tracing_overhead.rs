//! What tracing adds to a request (issue #17 goal: < 5 % and < 0.5 ms): `/chat` with no
//! tool step and with four tool-calling steps. One stack, exporting to an OTLP receiver
//! on loopback with `otel_traces_sampler_ratio=0`, so each request's own `traceparent`
//! decides: sampled (`-01`: every span recorded and exported) or not (`-00`: trace context
//! only, as with no exporter). Requests alternate between the two on the same instance,
//! graph and LLM stub, so load on the machine hits both alike; medians of RUNS each. The
//! export follows the response, so it is outside the measured time unless it delays the
//! next request. Run: `cargo bench -p kg-e2e --bench tracing_overhead`.

use kg_e2e::Stack;
use kg_e2e::llm_stub::{ScriptedLlm, distinct_statistics_steps, text};
use kg_e2e::otlp::Receiver;
use serde_json::json;
use std::time::{Duration, Instant};

const RUNS: usize = 200;
const STEPS: usize = 4;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let llm = ScriptedLlm::start().await;
    let receiver = Receiver::start().await;
    let stack = Stack::start_with(
        &[
            llm.variables(),
            receiver.variables(),
            vec![("otel_traces_sampler_ratio", "0".to_string())],
        ]
        .concat(),
    )
    .await?;
    let client = kg_e2e::auth::client(kg_e2e::auth::ADMIN);

    let turn = |steps: usize| {
        let mut script = distinct_statistics_steps(steps);
        script.push(text("draft"));
        script.push(text("There are 10 suppliers."));
        llm.then(script);
    };
    let mut results = Vec::new();
    let mut sampled_requests = 0;
    for steps in [0, STEPS] {
        let (mut t_off, mut t_on) = (Vec::new(), Vec::new());
        for run in 0..RUNS + 5 {
            // Which goes first alternates, so neither always follows the other.
            let first_on = run % 2 == 0;
            for sampled in [first_on, !first_on] {
                turn(steps);
                let took = send(&client, &stack, sampled).await?;
                // The first five of each are warm-up.
                if run >= 5 {
                    if sampled { &mut t_on } else { &mut t_off }.push(took);
                }
                sampled_requests += usize::from(sampled);
            }
        }
        results.push((steps, median(&mut t_off), median(&mut t_on)));
    }
    // Every sampled request was exported, none of the others.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let traces = receiver.traces().await.len();
    anyhow::ensure!(
        traces == sampled_requests,
        "{traces} traces exported for {sampled_requests} sampled requests"
    );

    for (steps, t_off, t_on) in results {
        let delta = ms(t_on) - ms(t_off);
        println!(
            "/chat, {steps} tool steps: not recorded {:>7.3} ms, recorded and exported {:>7.3} ms: {:+.3} ms ({:+.1} %)",
            ms(t_off),
            ms(t_on),
            delta,
            100.0 * delta / ms(t_off)
        );
    }
    println!("traces received by the OTLP receiver: {traces}");
    Ok(())
}

async fn send(client: &reqwest::Client, stack: &Stack, sampled: bool) -> anyhow::Result<Duration> {
    // A fresh trace id per request, so the receiver counts traces.
    let trace_id = format!(
        "{:032x}",
        rand_core::RngCore::next_u64(&mut rand_core::OsRng) as u128 | 1 << 100
    );
    let flags = if sampled { "01" } else { "00" };
    let start = Instant::now();
    let r: serde_json::Value = client
        .post(format!("{}/chat", stack.host.url))
        .header(
            "traceparent",
            format!("00-{trace_id}-00f067aa0ba902b7-{flags}"),
        )
        .body(
            json!({"message": "How many suppliers are there?", "routing_mode": "rule"}).to_string(),
        )
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?;
    let took = start.elapsed();
    anyhow::ensure!(r["answer"] == "There are 10 suppliers.", "{r}");
    Ok(took)
}

fn median(samples: &mut [Duration]) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1_000.0
}
