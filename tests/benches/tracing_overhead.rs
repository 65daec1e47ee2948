//! What tracing adds to a request (issue #17 goal: < 5 % and < 0.5 ms): `/chat` with no
//! tool step and with four tool-calling steps, on two stacks alike but for tracing: one
//! with no exporter (tracing off), one exporting every trace (ratio 1) to an OTLP
//! receiver on loopback. Runs alternate between the stacks so drift hits both; medians of
//! RUNS each. The export itself follows the response, so it is outside the measured time
//! unless it delays the next request. Run: `cargo bench -p kg-e2e --bench tracing_overhead`.

use kg_e2e::Stack;
use kg_e2e::llm_stub::{ScriptedLlm, call, text};
use kg_e2e::otlp::Receiver;
use serde_json::json;
use std::time::{Duration, Instant};

const RUNS: usize = 200;
const STEPS: usize = 4;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let llm_off = ScriptedLlm::start().await;
    let llm_on = ScriptedLlm::start().await;
    let receiver = Receiver::start().await;
    let off = Stack::start_with(&llm_off.variables()).await?;
    let on = Stack::start_with(&[llm_on.variables(), receiver.variables()].concat()).await?;
    let client = kg_e2e::auth::client(kg_e2e::auth::ADMIN);

    let tool_args = json!({"label": "Supplier", "sample_size": 0});
    let turn = |llm: &ScriptedLlm, steps: usize| {
        let mut script: Vec<_> = (0..steps)
            .map(|_| call("get_node_statistics", tool_args.clone()))
            .collect();
        script.push(text("draft"));
        script.push(text("There are 10 suppliers."));
        llm.then(script);
    };
    let mut results = Vec::new();
    for steps in [0, STEPS] {
        let (mut t_off, mut t_on) = (Vec::new(), Vec::new());
        // Warm both instances' caches (compiled components, pooled connections).
        for _ in 0..5 {
            for (stack, llm) in [(&off, &llm_off), (&on, &llm_on)] {
                turn(llm, steps);
                send(&client, stack).await?;
            }
        }
        for run in 0..RUNS {
            // Which stack goes first alternates, so neither always follows the other.
            let first_off = run % 2 == 0;
            for pass_off in [first_off, !first_off] {
                let (stack, llm, samples) = if pass_off {
                    (&off, &llm_off, &mut t_off)
                } else {
                    (&on, &llm_on, &mut t_on)
                };
                turn(llm, steps);
                samples.push(send(&client, stack).await?);
            }
        }
        results.push((steps, median(&mut t_off), median(&mut t_on)));
    }
    // The "on" stack exported every request: the traces arrived.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let traces = receiver.traces().await.len();
    anyhow::ensure!(traces >= 2 * (RUNS + 5), "only {traces} traces exported");

    for (steps, t_off, t_on) in results {
        let delta = ms(t_on) - ms(t_off);
        println!(
            "/chat, {steps} tool steps: tracing off {:>7.2} ms, on (exported) {:>7.2} ms: {:+.3} ms ({:+.1} %)",
            ms(t_off),
            ms(t_on),
            delta,
            100.0 * delta / ms(t_off)
        );
    }
    println!("traces received by the OTLP receiver: {traces}");
    Ok(())
}

async fn send(client: &reqwest::Client, stack: &Stack) -> anyhow::Result<Duration> {
    let start = Instant::now();
    let r: serde_json::Value = client
        .post(format!("{}/chat", stack.host.url))
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
