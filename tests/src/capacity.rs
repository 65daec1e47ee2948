//! Bursts of concurrent requests, and what each host must do with them (DESIGN.md §13).
//!
//! A request instantiates its Spin component whole (dependencies composed in), and Spin
//! takes every memory, table and core instance of it from its pooling allocator's totals
//! (1,000 memories, 2,000 tables, 4,000 core instances by default). A burst larger than
//! the totals allow is partly refused by Spin itself, before the component runs: a 500
//! with an empty body, logged as `maximum concurrent limit of … reached`. How many fit is
//! what `devhost --footprint` computes from the composed component; the tests here hold
//! Spin to it:
//!
//! - devhost queues what its pool cannot hold: every request of the burst is answered;
//! - on Spin, when the footprint's capacity covers the burst, every request is answered;
//!   otherwise every request still gets an answer promptly (no hang, no dropped
//!   connection), each refusal is Spin's, and at least the capacity's worth succeed
//!   (less a margin: two requests that each took part of the pool can both be refused,
//!   so a burst lands a little under the exact quotient).

use crate::host::{AppHost, HostKind, devhost_binary};
use anyhow::{Context, Result, bail};
use std::path::Path;
use std::time::{Duration, Instant};

/// What one request to a Spin component takes from the pool, and how many of them
/// Spin's default pool holds at once (`devhost --footprint json`).
#[derive(Debug, Clone)]
pub struct Footprint {
    pub component: String,
    pub nested_components: u64,
    pub core_instances: u64,
    pub memories: u64,
    pub tables: u64,
    pub spin_default_capacity: u64,
    pub spin_default_bound: String,
}

/// The footprint of every component of `manifest`.
pub fn footprints(manifest: &Path) -> Result<Vec<Footprint>> {
    let output = std::process::Command::new(devhost_binary())
        .arg("--manifest")
        .arg(manifest)
        .args(["--footprint", "json"])
        .output()
        .context("running devhost --footprint")?;
    if !output.status.success() {
        bail!(
            "devhost --footprint failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let text = String::from_utf8(output.stdout)?;
    text.lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line)?;
            let number = |name: &str| v[name].as_u64().with_context(|| format!("{name}: {v}"));
            Ok(Footprint {
                component: v["component"].as_str().unwrap_or_default().to_string(),
                nested_components: number("nested_components")?,
                core_instances: number("core_instances")?,
                memories: number("memories")?,
                tables: number("tables")?,
                spin_default_capacity: number("spin_default_capacity")?,
                spin_default_bound: v["spin_default_bound"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            })
        })
        .collect()
}

/// The footprint of one component of `manifest`.
pub fn footprint(manifest: &Path, component: &str) -> Result<Footprint> {
    footprints(manifest)?
        .into_iter()
        .find(|f| f.component == component)
        .with_context(|| format!("no component `{component}` in {}", manifest.display()))
}

/// One request of a burst.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: &'static str,
    pub path: String,
    pub body: String,
    /// Send the host's credential (else none).
    pub authenticated: bool,
}

/// What one request of a burst got.
#[derive(Debug)]
pub enum Outcome {
    Answered {
        status: u16,
        body: String,
    },
    /// No answer: the connection failed or closed, or the deadline passed.
    Unanswered(String),
}

/// How a burst went.
#[derive(Debug)]
pub struct Burst {
    pub outcomes: Vec<Outcome>,
    pub elapsed: Duration,
}

impl Burst {
    pub fn succeeded(&self) -> usize {
        self.outcomes
            .iter()
            .filter(
                |o| matches!(o, Outcome::Answered { status, .. } if (200..300).contains(status)),
            )
            .count()
    }

    /// Spin's own refusals: a 500 with an empty body.
    pub fn host_refusals(&self) -> usize {
        self.outcomes
            .iter()
            .filter(|o| matches!(o, Outcome::Answered { status: 500, body } if body.is_empty()))
            .count()
    }

    pub fn summary(&self) -> String {
        let mut by_status = std::collections::BTreeMap::<String, usize>::new();
        for outcome in &self.outcomes {
            let key = match outcome {
                Outcome::Answered { status, body } if body.is_empty() => {
                    format!("{status} (empty)")
                }
                Outcome::Answered { status, .. } => status.to_string(),
                Outcome::Unanswered(e) => format!("unanswered: {e}"),
            };
            *by_status.entry(key).or_default() += 1;
        }
        format!("{by_status:?} in {} ms", self.elapsed.as_millis())
    }
}

/// `n` copies of `request` sent at once, each on its own connection, each given
/// `deadline` to be answered in full.
pub async fn burst(host: &AppHost, request: &Request, n: usize, deadline: Duration) -> Burst {
    let client = reqwest::Client::builder()
        .timeout(deadline)
        .pool_max_idle_per_host(0)
        .build()
        .unwrap_or_default();
    let started = Instant::now();
    let sends = (0..n).map(|_| {
        let mut builder = client.request(
            reqwest::Method::from_bytes(request.method.as_bytes()).unwrap_or(reqwest::Method::GET),
            format!("{}{}", host.url, request.path),
        );
        if request.authenticated
            && let Some(key) = &host.key
        {
            builder = builder.bearer_auth(key);
        }
        if request.method != "GET" {
            builder = builder
                .header("content-type", "application/json")
                .body(request.body.clone());
        }
        async move {
            match builder.send().await {
                Ok(response) => {
                    let status = response.status().as_u16();
                    match response.text().await {
                        Ok(body) => Outcome::Answered { status, body },
                        Err(e) => Outcome::Unanswered(format!("{status}, body: {e}")),
                    }
                }
                Err(e) => Outcome::Unanswered(format!("{e:?}")),
            }
        }
    });
    let outcomes = futures::future::join_all(sends).await;
    Burst {
        outcomes,
        elapsed: started.elapsed(),
    }
}

/// The share of Spin's computed capacity a burst must land at least (see the module
/// comment: requests refused part-way through their instantiation).
pub const SPIN_CAPACITY_MARGIN: f64 = 0.9;

/// Holds `burst` (of requests to `component` of this run's manifest) to what its host
/// must do; `Err` says how it departed. Prints one line either way, for the note.
pub fn check(host: &AppHost, component: &Footprint, what: &str, burst: &Burst) -> Result<()> {
    let n = burst.outcomes.len();
    let unanswered: Vec<&String> = burst
        .outcomes
        .iter()
        .filter_map(|o| match o {
            Outcome::Unanswered(e) => Some(e),
            Outcome::Answered { .. } => None,
        })
        .collect();
    eprintln!(
        "{what} on {}: {n} at once: {} ({} succeeded; a request to `{}` instantiates {} \
         memories, {} tables, {} core instances; Spin's default pool: {} at once, bound by {})",
        host.kind.name(),
        burst.summary(),
        burst.succeeded(),
        component.component,
        component.memories,
        component.tables,
        component.core_instances,
        component.spin_default_capacity,
        component.spin_default_bound
    );
    if !unanswered.is_empty() {
        bail!(
            "{what}: {} of {n} got no answer, e.g. {}",
            unanswered.len(),
            unanswered[0]
        );
    }
    let capacity = component.spin_default_capacity as usize;
    if host.kind == HostKind::Devhost || capacity >= n {
        if burst.succeeded() != n {
            bail!("{what}: not every request succeeded: {}", burst.summary());
        }
        return Ok(());
    }
    // Spin, past its default pool: the rest must be Spin's own prompt refusals.
    if burst.succeeded() + burst.host_refusals() != n {
        bail!(
            "{what}: answers other than success or Spin's pool refusal: {}",
            burst.summary()
        );
    }
    let floor = (capacity as f64 * SPIN_CAPACITY_MARGIN) as usize;
    if burst.succeeded() < floor {
        bail!(
            "{what}: {} succeeded, fewer than {floor} ({}% of the {capacity} the footprint allows)",
            burst.succeeded(),
            (SPIN_CAPACITY_MARGIN * 100.0) as u32
        );
    }
    if burst.host_refusals() > 0 && !logged(host, "maximum concurrent limit") {
        bail!("{what}: bodiless 500s without Spin's `maximum concurrent limit` log line");
    }
    Ok(())
}

/// Whether the host logged a line containing `needle` (waiting up to 2 s: its stderr is
/// read on a thread of its own).
fn logged(host: &AppHost, needle: &str) -> bool {
    for _ in 0..40 {
        if host.stderr_lines().iter().any(|line| line.contains(needle)) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}
