//! Python test tools from PyPI (the MCP SDK, schemathesis), each in a virtualenv of its
//! own that tests/python-venv.sh makes once per requirements.txt.

use crate::workspace;
use anyhow::{Context, Result, bail};
use std::path::PathBuf;
use tokio::process::Command;

/// The python of `tests/<name>/`'s virtualenv, made when missing or outdated. A failure
/// fails the test: these tests are never skipped for want of Python or PyPI.
pub async fn venv(name: &str) -> Result<PathBuf> {
    let output = Command::new("bash")
        .arg(workspace().join("tests/python-venv.sh"))
        .arg(name)
        .output()
        .await
        .context("running tests/python-venv.sh")?;
    if !output.status.success() {
        bail!(
            "tests/python-venv.sh {name} failed (python3 with venv and PyPI are needed): {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(PathBuf::from(String::from_utf8(output.stdout)?.trim()))
}
