//! Time to the first answer token with an LLM that streams: the stub writes its first
//! token 200 ms after the answering call's request arrives, then one every 100 ms. Three
//! paths:
//! - a question: a ReAct step calls a tool, the next answers, and the summariser's
//!   streamed call writes the answer;
//! - small talk (intent `answer`): the LLM's own streamed call is the answer;
//! - a question whose first ReAct step answers without calling a tool: that step's
//!   streamed call is the answer.
//!
//! Reported for each:
//! - end to end: from the client's `POST /chat/stream` to its first `content` event;
//! - from the answering LLM call (its request reaching the LLM) to that event (goal
//!   ≤ 205 ms: the LLM's own 200 ms plus at most 5 ms);
//! - from the LLM writing its first token to that event (the forwarding lag).
//!
//! Medians (and max) over 20 runs each. Run: `cargo bench -p kg-e2e --bench first_token`.

use kg_e2e::llm_stub::streamed::{Step, StreamingLlm, timed_chat_stream};
use kg_e2e::{Stack, auth};
use serde_json::json;
use std::time::{Duration, Instant};

const RUNS: usize = 20;

fn report(name: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "{name}: median {:.1} ms, max {:.1} ms ({} runs)",
        ms(samples[samples.len() / 2]),
        ms(samples[samples.len() - 1]),
        samples.len()
    );
}

fn answer_tokens() -> Step {
    Step::Tokens {
        first_token: Duration::from_millis(200),
        between: Duration::from_millis(100),
        tokens: vec!["There ".into(), "are ".into(), "10 suppliers.".into()],
    }
}

/// `RUNS` turns of `message`, each scripted by `script`; prints the three timings.
async fn measure(
    name: &str,
    llm: &StreamingLlm,
    stack: &Stack,
    message: &str,
    script: impl Fn() -> Vec<Step>,
) -> anyhow::Result<()> {
    let (mut end_to_end, mut from_call, mut lag) = (Vec::new(), Vec::new(), Vec::new());
    let streamed_before = llm.timings().len();
    for run in 0..RUNS {
        llm.then(script());
        let start = Instant::now();
        let events = timed_chat_stream(
            &stack.host.url,
            auth::ADMIN,
            &json!({"message": message, "routing_mode": "rule"}),
        )
        .await?;
        // The answer's first token: after the last `content_start` that resets (a step's
        // streamed draft before the summariser's answer is not the answer).
        let answer_from = events
            .iter()
            .rposition(|(_, e)| e["type"] == "content_start" && e["reset"] == true)
            .unwrap_or(0);
        let first = events[answer_from..]
            .iter()
            .find(|(_, e)| e["type"] == "content")
            .map(|(at, _)| *at)
            .ok_or_else(|| anyhow::anyhow!("{name} run {run}: no content event"))?;
        let timing = llm
            .timings()
            .get(streamed_before + run)
            .cloned()
            .ok_or_else(|| anyhow::anyhow!("{name} run {run}: the LLM streamed nothing"))?;
        let (Some(received), Some(first_token)) = (timing.received, timing.first_token) else {
            anyhow::bail!("{name} run {run}: no first token");
        };
        end_to_end.push(first.duration_since(start));
        from_call.push(first.duration_since(received));
        lag.push(first.duration_since(first_token));
    }
    report(
        &format!("{name}: first answer token, end to end"),
        end_to_end,
    );
    report(
        &format!("{name}: first answer token, from the answering LLM call"),
        from_call,
    );
    report(
        &format!("{name}: forwarding lag after the LLM's first token"),
        lag,
    );
    Ok(())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let llm = StreamingLlm::start().await?;
    let stack = Stack::start_with(&llm.variables()).await?;
    measure(
        "summariser (after a tool)",
        &llm,
        &stack,
        "How many suppliers are there?",
        || {
            vec![
                Step::Tools(vec![(
                    "search_instances".into(),
                    json!({"search_term": "SUP"}),
                )]),
                Step::Text("draft".into()),
                answer_tokens(),
            ]
        },
    )
    .await?;
    measure("direct answer (small talk)", &llm, &stack, "hello", || {
        vec![answer_tokens()]
    })
    .await?;
    measure(
        "ReAct step answering without tools",
        &llm,
        &stack,
        "How many suppliers are there?",
        || vec![answer_tokens()],
    )
    .await?;
    Ok(())
}
