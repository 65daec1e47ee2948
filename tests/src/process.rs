//! Child processes of the harness: finding the address a server prints when it is ready.

use anyhow::{Context, Result, bail};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Child;

/// Reads a child's stdout until a line containing `marker` followed by a URL (e.g.
/// "listening on http://…" or Spin's "Serving http://…"); keeps draining after, so the
/// child never blocks on a full pipe.
pub async fn listening_url(child: &mut Child, what: &str, marker: &str) -> Result<String> {
    let stdout = child.stdout.take().context("child stdout")?;
    let mut lines = BufReader::new(stdout).lines();
    let url = tokio::time::timeout(Duration::from_secs(120), async {
        while let Some(line) = lines.next_line().await? {
            if let Some(rest) = line.split(marker).nth(1) {
                return Ok(rest
                    .split_whitespace()
                    .next()
                    .unwrap_or_default()
                    .to_string());
            }
        }
        bail!("{what} exited before it was ready (see its output above)")
    })
    .await
    .with_context(|| format!("{what} did not start within 120 s"))??;
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Ok(url)
}

/// A free TCP port on 127.0.0.1, for servers that cannot be told to pick one themselves.
pub fn free_port() -> Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?.port())
}
