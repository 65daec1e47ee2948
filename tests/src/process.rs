//! Child processes of the harness: finding the address a server prints when it is ready,
//! and the file a build script made.

use anyhow::{Context, Result, bail};
use std::path::PathBuf;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

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

/// Runs `command`, a build or install script that prints the path of the file it made on
/// standard output (its progress goes to standard error), and returns that path; `what`
/// names the command in errors, which carry its standard error.
pub async fn path_printed_by(command: &mut Command, what: &str) -> Result<PathBuf> {
    let output = succeeded(command, what).await?;
    let path = PathBuf::from(String::from_utf8(output.stdout)?.trim());
    if !path.is_file() {
        bail!("{what} printed {}, which is no file", path.display());
    }
    Ok(path)
}

/// Runs `command` to its end and returns its output; a failure is an error naming `what`
/// with the command's standard error.
pub async fn succeeded(command: &mut Command, what: &str) -> Result<std::process::Output> {
    let output = command
        .output()
        .await
        .with_context(|| format!("running {what}"))?;
    if !output.status.success() {
        bail!(
            "{what} failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(output)
}
