//! A router written in another language swapped into the application (issue #38): the
//! Python router of `examples/router-python/` (componentize-py from PyPI), built by its own
//! `build.sh`, and a copy of the project's `spin.toml` whose dispatcher dependency
//! `kg:router/router@0.1.0` points at it — made from spin.toml on every run, so it cannot
//! drift from the manifest users run.

use crate::{manifest_variant_of, workspace};
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio::process::Command;
use tokio::sync::OnceCell;

/// The dependency key of the router in spin.toml.
pub const ROUTER_DEPENDENCY: &str = "\"kg:router/router@0.1.0\"";

static PYTHON_ROUTER: OnceCell<(PathBuf, Duration)> = OnceCell::const_new();

/// The Python router's component, built on first use by `examples/router-python/build.sh`
/// (a no-op when nothing changed), and how long that call took. A failure fails the
/// caller: python3 with venv and PyPI are needed, and a test is never skipped for want of them.
pub async fn python_router() -> Result<(PathBuf, Duration)> {
    PYTHON_ROUTER
        .get_or_try_init(|| async {
            let script = workspace().join("examples/router-python/build.sh");
            let started = Instant::now();
            let output = Command::new("bash")
                .arg(&script)
                .output()
                .await
                .with_context(|| format!("running {}", script.display()))?;
            let took = started.elapsed();
            if !output.status.success() {
                bail!(
                    "examples/router-python/build.sh failed ({}; python3 with venv and PyPI are needed): {}",
                    output.status,
                    String::from_utf8_lossy(&output.stderr)
                );
            }
            let wasm = PathBuf::from(String::from_utf8(output.stdout)?.trim());
            if !wasm.is_file() {
                bail!("build.sh printed {}, which is no file", wasm.display());
            }
            Ok((wasm, took))
        })
        .await
        .cloned()
}

/// The project's spin.toml (always that one: a pre-composed manifest has no dependency to
/// swap), written into `dir` with absolute paths, its router dependency pointing at `router`.
pub fn manifest_with_router(dir: &Path, router: &Path) -> Result<PathBuf> {
    let mut swapped = 0;
    let path = manifest_variant_of(&workspace().join("spin.toml"), dir, |text| {
        text.lines()
            .map(|line| {
                if line.trim_start().starts_with(ROUTER_DEPENDENCY) {
                    swapped += 1;
                    format!(
                        "{ROUTER_DEPENDENCY} = {{ path = {} }}",
                        serde_json::Value::String(router.display().to_string())
                    )
                } else {
                    line.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
            + "\n"
    })?;
    if swapped != 1 {
        bail!("spin.toml has {swapped} `{ROUTER_DEPENDENCY} = …` dependency lines, not one");
    }
    Ok(path)
}
