//! Health latency through devhost as deployed (no `--server-timing`): sequential requests
//! after a warm-up, over real HTTP on one kept-alive connection, each one instantiating the
//! composed component (as Spin does). Prints the distribution of:
//!
//! - `GET /health/live` sent with reqwest (the client the other benches use);
//! - `GET /health/live` sent as raw HTTP/1.1 bytes on a TCP stream: the same exchange
//!   without reqwest's own work (its connection pool, its connection task and the hand-over
//!   between the two), closer to what the server costs;
//! - `GET /health` (every component over WIT, a graph round trip, the KV store) with reqwest.
//!
//! Run: `cargo bench -p kg-e2e --bench health_latency` (after scripts/setup.sh);
//! `KG_BENCH_SHORT=1` for fewer requests.

use kg_e2e::Stack;
use kg_e2e::raw_http::{Connection, authority, keep_alive_head};
use std::time::{Duration, Instant};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let short = std::env::var("KG_BENCH_SHORT").is_ok_and(|v| v == "1");
    let requests = if short { 200 } else { 1_000 };
    // Held to the end: dropping the stack stops devgraph and devhost.
    let stack = Stack::start().await?;
    let host = &stack.host;
    let client = kg_e2e::auth::client(kg_e2e::auth::ADMIN);

    let live = format!("{}/health/live", host.url);
    let with_reqwest = measure(requests, || get(&client, &live)).await?;
    print("GET /health/live, reqwest", &with_reqwest);

    let mut connection = Connection::open(&host.url).await?;
    let head = keep_alive_head("GET", "/health/live", &authority(&host.url)?, &[]);
    let connection = tokio::sync::Mutex::new(&mut connection);
    let raw = measure(requests, || async {
        let mut connection = connection.lock().await;
        connection.send(&head).await?;
        let response = connection.response().await?;
        anyhow::ensure!(
            response.status == Some(200),
            "GET /health/live: {}",
            response.describe()
        );
        Ok(())
    })
    .await?;
    print("GET /health/live, raw HTTP/1.1", &raw);
    kg_e2e::bench_results::record("health_live.reqwest_ms", ms(at(&with_reqwest, 0.5)))?;
    kg_e2e::bench_results::record("health_live.raw_ms", ms(at(&raw, 0.5)))?;

    let health = format!("{}/health", host.url);
    let full = measure(requests, || get(&client, &health)).await?;
    print("GET /health, reqwest", &full);
    Ok(())
}

/// One GET with reqwest, its body read to the end; an error status is an error.
async fn get(client: &reqwest::Client, url: &str) -> anyhow::Result<()> {
    client
        .get(url)
        .send()
        .await?
        .error_for_status()?
        .bytes()
        .await?;
    Ok(())
}

/// `requests` sequential exchanges after 20 unmeasured ones, sorted.
async fn measure<F, Fut>(requests: usize, exchange: F) -> anyhow::Result<Vec<Duration>>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<()>>,
{
    for _ in 0..20 {
        exchange().await?;
    }
    let mut samples = Vec::with_capacity(requests);
    for _ in 0..requests {
        let started = Instant::now();
        exchange().await?;
        samples.push(started.elapsed());
    }
    samples.sort();
    Ok(samples)
}

/// The sample at quantile `q` of `sorted` (0.5: the median printed and recorded).
fn at(sorted: &[Duration], q: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * q).round() as usize]
}

fn print(what: &str, sorted: &[Duration]) {
    let at = |q: f64| at(sorted, q);
    println!(
        "{what} through devhost, {} requests: median {:.3} ms, p90 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        sorted.len(),
        ms(at(0.5)),
        ms(at(0.9)),
        ms(at(0.99)),
        ms(at(1.0))
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
