//! What authentication adds to a request, on devhost: 1,000 sequential `GET /tools` after
//! a warm-up with (a) `auth_mode=none`, (b) an API key, (c) OIDC JWTs signed RS256, ES256
//! and EdDSA whose JWKS is cached (a local issuer, `kg_e2e::oidc`), each once with a new
//! token per request (every signature verified) and once reusing one token (remembered
//! after its first verification, as a client reusing its access token). Prints median / p90 / p99 of the round trip
//! for each and, when the response carries `Server-Timing: auth;dur=<ms>` (the time the
//! dispatcher spent authenticating), its median and p99. Reports only; never fails on
//! noise. Run: `cargo bench -p kg-e2e --bench auth_latency` (after scripts/setup.sh).

use kg_e2e::oidc::{Issuer, SigningKey};
use kg_e2e::{AppHost, Graph, HostKind, KeyValue, app_manifest, auth};
use std::time::{Duration, Instant};

const REQUESTS: usize = 1_000;
const WARM_UP: usize = 50;

struct Row {
    name: &'static str,
    round_trip: Vec<Duration>,
    auth_ms: Vec<f64>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let graph = Graph::start().await?;
    let rs = SigningKey::rs256("bench-rs");
    let es = SigningKey::es256("bench-es");
    let ed = SigningKey::ed25519("bench-ed");
    let issuer = Issuer::start(&[&rs, &es, &ed]).await;
    let dir = tempfile::tempdir()?;

    let mut rows = Vec::new();
    for (name, mode, key, fresh) in [
        ("none (auth_mode=none)", "none", None, false),
        ("API key", "api_key", None, false),
        (
            "JWT RS256, new token each request",
            "api_key,oidc",
            Some(&rs),
            true,
        ),
        (
            "JWT ES256, new token each request",
            "api_key,oidc",
            Some(&es),
            true,
        ),
        (
            "JWT EdDSA, new token each request",
            "api_key,oidc",
            Some(&ed),
            true,
        ),
        (
            "JWT RS256, one token reused",
            "api_key,oidc",
            Some(&rs),
            false,
        ),
        (
            "JWT ES256, one token reused",
            "api_key,oidc",
            Some(&es),
            false,
        ),
    ] {
        let mut variables = graph.variables();
        if mode == "api_key,oidc" {
            variables.extend(issuer.variables(mode));
        } else {
            variables.push(("auth_mode", mode.to_string()));
        }
        let host = AppHost::start_on(
            HostKind::Devhost,
            &app_manifest(),
            &KeyValue::File(dir.path().join(format!("kv-{}.db", rows.len()))),
            &variables,
        )
        .await?;
        let credential = |i: usize| match (mode, key) {
            ("none", _) => None,
            (_, None) => Some(auth::VIEWER.to_string()),
            (_, Some(key)) => Some(key.sign(&{
                let mut claims = issuer.claims("bench-user", &["viewer"]);
                // Valid for the whole run.
                claims["exp"] = serde_json::json!(kg_e2e::oidc::now() + 3600);
                if fresh {
                    claims["jti"] = serde_json::json!(format!("bench-{i}"));
                }
                claims
            })),
        };
        rows.push(measure(name, &host, &credential).await?);
        host.stop().await?;
    }
    let jwks = issuer.requests_to("/jwks").await;

    println!(
        "GET /tools through devhost, {REQUESTS} sequential requests each after {WARM_UP} warm-up"
    );
    println!("| auth | round trip median | p90 | p99 | Server-Timing auth median | auth p99 |");
    println!("|---|---|---|---|---|---|");
    let baseline = percentile(&rows[0].round_trip, 0.5);
    for row in &rows {
        let (median, p90, p99) = (
            percentile(&row.round_trip, 0.5),
            percentile(&row.round_trip, 0.9),
            percentile(&row.round_trip, 0.99),
        );
        let (auth_median, auth_p99) = if row.auth_ms.is_empty() {
            ("n/a".to_string(), "n/a".to_string())
        } else {
            let mut sorted = row.auth_ms.clone();
            sorted.sort_by(f64::total_cmp);
            let at = |q: f64| sorted[((sorted.len() as f64 - 1.0) * q).round() as usize];
            (format!("{:.3} ms", at(0.5)), format!("{:.3} ms", at(0.99)))
        };
        println!(
            "| {} | {:.3} ms ({:+.3}) | {:.3} ms | {:.3} ms | {auth_median} | {auth_p99} |",
            row.name,
            ms(median),
            ms(median) - ms(baseline),
            ms(p90),
            ms(p99),
        );
    }
    println!(
        "(round-trip difference to auth_mode=none in brackets; JWKS fetched {jwks} time(s) for {} JWT requests)",
        5 * (REQUESTS + WARM_UP)
    );
    Ok(())
}

/// `credential(i)` is the credential of request `i` (signed before the clock starts).
async fn measure(
    name: &'static str,
    host: &AppHost,
    credential: &dyn Fn(usize) -> Option<String>,
) -> anyhow::Result<Row> {
    for i in 0..WARM_UP {
        let key = credential(REQUESTS + i);
        let response = host.request_as(key.as_deref(), "GET", "/tools", "").await?;
        anyhow::ensure!(
            response.status().is_success(),
            "{name}: warm-up answered {}",
            response.status()
        );
        response.bytes().await?;
    }
    let mut round_trip = Vec::with_capacity(REQUESTS);
    let mut auth_ms = Vec::new();
    for i in 0..REQUESTS {
        let key = credential(i);
        let started = Instant::now();
        let response = host.request_as(key.as_deref(), "GET", "/tools", "").await?;
        let status = response.status();
        let timing = response
            .headers()
            .get_all("server-timing")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .find_map(auth_duration);
        response.bytes().await?;
        round_trip.push(started.elapsed());
        anyhow::ensure!(status.is_success(), "{name}: answered {status}");
        if let Some(dur) = timing {
            auth_ms.push(dur);
        }
    }
    round_trip.sort();
    Ok(Row {
        name,
        round_trip,
        auth_ms,
    })
}

/// The `dur` of the `auth` metric in a Server-Timing value such as
/// `auth;dur=0.042, total;dur=3.1`.
fn auth_duration(header: &str) -> Option<f64> {
    header.split(',').find_map(|metric| {
        let mut parts = metric.split(';').map(str::trim);
        if parts.next()? != "auth" {
            return None;
        }
        parts.find_map(|p| p.strip_prefix("dur=")?.trim_matches('"').parse().ok())
    })
}

fn percentile(sorted: &[Duration], q: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * q).round() as usize]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
