//! The agent's own cost with an LLM stub that answers at once (wiremock on loopback):
//! - time to the first SSE event of `/chat/stream` (the `: kg-agent` comment, sent before
//!   any work) and to the `conversation_id` event;
//! - orchestration overhead per agent step: `/chat` with four tool-calling steps vs none,
//!   per step, minus the graph work of a step sent straight to devgraph on a kept-alive
//!   connection, as the application sends it: each step's count query (a count found
//!   proves the label exists, so the turn sends no `db.labels()`: 4 graph requests).
//!
//! Medians over 100 runs each. Run: `cargo bench -p kg-e2e --bench chat_latency`.

use kg_e2e::Stack;
use kg_e2e::llm_stub::{ScriptedLlm, distinct_statistics_steps, text};
use serde_json::json;
use std::time::{Duration, Instant};

const RUNS: usize = 100;
const STEPS: usize = 4;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let llm = ScriptedLlm::start().await;
    let stack = Stack::start_with(&llm.variables()).await?;
    let client = kg_e2e::auth::client(kg_e2e::auth::ADMIN);
    let url = |path: &str| format!("{}{path}", stack.host.url);

    let mut first_byte = Vec::new();
    let mut first_event = Vec::new();
    for _ in 0..RUNS {
        llm.then([text("Hello!")]);
        let start = Instant::now();
        let mut response = client
            .post(url("/chat/stream"))
            .body(json!({"message": "hello", "routing_mode": "rule"}).to_string())
            .send()
            .await?;
        let mut seen = String::new();
        let mut got_first = false;
        while let Some(chunk) = response.chunk().await? {
            if !got_first {
                first_byte.push(start.elapsed());
                got_first = true;
            }
            seen.push_str(&String::from_utf8_lossy(&chunk));
            if seen.contains("event: conversation_id") {
                first_event.push(start.elapsed());
                break;
            }
        }
        // Drain the rest so the next run starts clean.
        while response.chunk().await?.is_some() {}
    }

    // A step's graph work, straight to devgraph: get_node_statistics for one label without
    // samples is one count query (the label is looked up only when the count is 0).
    let graph_client = reqwest::Client::new();
    let count = "MATCH (n:`Supplier`) RETURN count(n) AS count LIMIT 1";
    stack.graph.query_on(&graph_client, count).await?; // opens the connection
    let mut direct_count = Vec::new();
    for _ in 0..RUNS {
        let start = Instant::now();
        stack.graph.query_on(&graph_client, count).await?;
        direct_count.push(start.elapsed());
    }

    let mut zero = Vec::new();
    let mut four = Vec::new();
    for steps in [0, STEPS] {
        for _ in 0..RUNS {
            let mut script = distinct_statistics_steps(steps);
            // A ReAct step that calls no tool is the answer itself; after tool calls the
            // summariser writes the answer from the evidence.
            if steps > 0 {
                script.push(text("draft"));
            }
            script.push(text("There are 10 suppliers."));
            llm.then(script);
            let start = Instant::now();
            let r: serde_json::Value = client
                .post(url("/chat"))
                .body(
                    json!({"message": "How many suppliers are there?", "routing_mode": "rule"})
                        .to_string(),
                )
                .send()
                .await?
                .error_for_status()?
                .json()
                .await?;
            anyhow::ensure!(r["answer"] == "There are 10 suppliers.", "{r}");
            if steps == 0 {
                zero.push(start.elapsed())
            } else {
                four.push(start.elapsed())
            }
        }
    }

    let (z, f) = (median(&mut zero), median(&mut four));
    let per_step = (ms(f) - ms(z)) / STEPS as f64;
    let graph_per_step = ms(median(&mut direct_count));
    println!(
        "time to first SSE byte (median of {RUNS}):        {:>7.2} ms",
        ms(median(&mut first_byte))
    );
    println!(
        "time to the conversation_id event (median):      {:>7.2} ms",
        ms(median(&mut first_event))
    );
    println!(
        "/chat, no tool step (router, one ReAct step):     {:>7.2} ms",
        ms(z)
    );
    println!(
        "/chat, {STEPS} tool steps:                            {:>7.2} ms",
        ms(f)
    );
    println!(
        "per step:                                         {:>7.2} ms",
        per_step
    );
    println!(
        "  of which its graph work, sent straight:         {graph_per_step:>7.2} ms (a count query)"
    );
    println!(
        "  the rest per step (LLM stub round trip, WIT, JSON, events): {:.2} ms",
        per_step - graph_per_step
    );
    Ok(())
}

fn median(samples: &mut [Duration]) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1_000.0
}
