//! The official MCP Python SDK as a client of `/mcp` (tests/mcp/client.py): a virtualenv
//! made once by tests/python-venv.sh, then one process per scripted session.

use crate::{AppHost, workspace};
use anyhow::{Context, Result, bail};
use serde_json::Value;
use std::path::PathBuf;
use tokio::process::Command;
use tokio::sync::OnceCell;

static PYTHON: OnceCell<PathBuf> = OnceCell::const_new();

/// The virtualenv's python, made on first use (pip from PyPI; a failure fails the test:
/// these tests are not skipped for want of Python).
pub async fn python() -> Result<PathBuf> {
    PYTHON
        .get_or_try_init(|| async { crate::python::venv("mcp").await })
        .await
        .cloned()
}

/// Connects the SDK's `Client` to the host's `/mcp` with `key` as bearer credential, runs
/// `steps` (see client.py) and returns its report: `protocol_version`, `server_name`, and
/// one entry per step in `results`. The SDK's default mode: the newest revision it and
/// the server share.
pub async fn session(host: &AppHost, key: &str, steps: &Value) -> Result<Value> {
    session_in(host, key, steps, "auto").await
}

/// [`session`] in one of the SDK's connect modes (`auto`, `legacy`: the handshake).
pub async fn session_in(host: &AppHost, key: &str, steps: &Value, mode: &str) -> Result<Value> {
    let output = Command::new(python().await?)
        .arg(workspace().join("tests/mcp/client.py"))
        .arg(format!("{}/mcp", host.url))
        .arg(key)
        .arg(steps.to_string())
        .arg(mode)
        .output()
        .await?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        bail!("the MCP client failed ({}): {stderr}", output.status);
    }
    serde_json::from_slice(&output.stdout)
        .with_context(|| format!("the MCP client printed no JSON; stderr: {stderr}"))
}
