//! How long a host takes from start to serving: the `startup` and `swapped_router`
//! benches' one measurement.

use crate::{AppHost, Graph, HostKind, KeyValue};
use anyhow::Result;
use std::path::Path;
use std::time::{Duration, Instant};

/// (listening, `/health/live` 200, a tool call 200) after the start of `kind` serving
/// `manifest` on `graph`, with the compilation cache in `cache` (cold when empty). The
/// answers are awaited for at most `patience` each.
pub async fn measure(
    kind: HostKind,
    manifest: &Path,
    graph: &Graph,
    cache: &Path,
    patience: Duration,
) -> Result<[Duration; 3]> {
    std::fs::create_dir_all(cache)?;
    let config = cache.with_extension("toml");
    std::fs::write(
        &config,
        format!("[cache]\ndirectory = {:?}\n", cache.display().to_string()),
    )?;
    let config = config.display().to_string();
    // devhost takes the same flag (and the same wasmtime cache format).
    let flags = ["--cache", config.as_str()];
    let dir = tempfile::tempdir()?;
    let kv = KeyValue::File(dir.path().join("kv.db"));
    let started = Instant::now();
    let host =
        AppHost::start_with_host_flags(kind, manifest, &kv, &graph.variables(), &flags).await?;
    let listening = started.elapsed();
    let client = crate::auth::client(crate::auth::ADMIN);
    until_ok(patience, || client.get(format!("{}/health/live", host.url))).await?;
    let live = started.elapsed();
    until_ok(patience, || {
        client
            .post(format!("{}/tools/get_node_statistics", host.url))
            .body(r#"{"label": "Supplier"}"#)
    })
    .await?;
    let tool = started.elapsed();
    host.stop().await?;
    Ok([listening, live, tool])
}

/// Sends until the answer is 200 (every 10 ms, `patience` at most).
async fn until_ok(patience: Duration, request: impl Fn() -> reqwest::RequestBuilder) -> Result<()> {
    let started = Instant::now();
    while started.elapsed() < patience {
        if let Ok(r) = request().send().await
            && r.status().is_success()
        {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    anyhow::bail!("no 200 within {} s", patience.as_secs())
}
