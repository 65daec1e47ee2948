//! `/health` latency through devhost: 1,000 sequential requests after a warm-up, over real
//! HTTP, each one instantiating the composed component (as Spin does). Prints the
//! distribution. Run: `cargo bench -p kg-e2e --bench health_latency` (after scripts/setup.sh).

use kg_e2e::Stack;
use std::time::{Duration, Instant};

const REQUESTS: usize = 1_000;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // Held to the end: dropping the stack stops devgraph and devhost.
    let stack = Stack::start().await?;
    let host = &stack.host;
    let client = kg_e2e::auth::client(kg_e2e::auth::ADMIN);
    let url = format!("{}/health", host.url);
    for _ in 0..20 {
        client.get(&url).send().await?.error_for_status()?;
    }
    let mut samples: Vec<Duration> = Vec::with_capacity(REQUESTS);
    for _ in 0..REQUESTS {
        let started = Instant::now();
        let response = client.get(&url).send().await?.error_for_status()?;
        response.bytes().await?;
        samples.push(started.elapsed());
    }
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize];
    println!(
        "GET /health through devhost, {REQUESTS} requests: median {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        ms(at(0.5)),
        ms(at(0.9)),
        ms(at(0.99)),
        ms(at(1.0))
    );
    Ok(())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
