//! A router written in another language swapped into the application (issue #38): the
//! Python router of `examples/router-python/` (componentize-py from PyPI), built by its own
//! `build.sh`, and a copy of the project's `spin.toml` whose dispatcher dependency
//! `kg:router/router@0.1.0` points at it — made from spin.toml on every run, so it cannot
//! drift from the manifest users run. The manifest variants and the build-script runner
//! here serve every test that swaps a component (tests/src/added_tool.rs too).

use crate::process::path_printed_by;
use crate::{manifest_variant_of, workspace};
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio::process::Command;
use tokio::sync::OnceCell;

/// The dependency key of the router in spin.toml.
pub const ROUTER_DEPENDENCY: &str = "\"kg:router/router@0.1.0\"";

static PYTHON_ROUTER: OnceCell<(PathBuf, Duration)> = OnceCell::const_new();
static PROBE_ROUTER: OnceCell<(PathBuf, Duration)> = OnceCell::const_new();

/// The Python router's component, built on first use by `examples/router-python/build.sh`
/// (a no-op when nothing changed), and how long that call took. A failure fails the
/// caller: python3 with venv and PyPI are needed, and a test is never skipped for want of them.
pub async fn python_router() -> Result<(PathBuf, Duration)> {
    PYTHON_ROUTER
        .get_or_try_init(|| python_built_by("examples/router-python/build.sh"))
        .await
        .cloned()
}

/// The capability-probe router of `tests/fixtures/router-probe/` (Python, componentize-py):
/// it tries outbound HTTP and reading variables when asked to route `probe …`.
pub async fn probe_router() -> Result<PathBuf> {
    PROBE_ROUTER
        .get_or_try_init(|| python_built_by("tests/fixtures/router-probe/build.sh"))
        .await
        .map(|(path, _)| path.clone())
}

/// [`built_by`] for a componentize-py build, whose failure says what it needs.
async fn python_built_by(script: &str) -> Result<(PathBuf, Duration)> {
    built_by(script)
        .await
        .context("python3 with venv and PyPI are needed")
}

/// Runs a build script that prints the component's path; the path and how long it took.
pub(crate) async fn built_by(script: &str) -> Result<(PathBuf, Duration)> {
    let started = Instant::now();
    let wasm = path_printed_by(Command::new("bash").arg(workspace().join(script)), script).await?;
    Ok((wasm, started.elapsed()))
}

/// What the other dependencies are granted when the router's grant is its own: exactly
/// what they use (the graph and the LLM, their settings, the catalog and prompt mounts).
pub const COMPONENT_GRANTS: &str =
    r#"inherit_configuration = ["allowed_outbound_hosts", "variables", "files"]"#;

/// spin.toml with per-dependency grants instead of the component-wide
/// `dependencies_inherit_configuration` (Spin 4 takes one or the other): the router
/// dependency points at `router` with `router_grant` (`false`: nothing; `true`: all the
/// dispatcher has; or a list), every other dependency [`COMPONENT_GRANTS`].
pub fn manifest_with_router_grant(
    dir: &Path,
    router: &Path,
    router_grant: &str,
) -> Result<PathBuf> {
    let (mut removed, mut granted) = (0, 0);
    let path = manifest_variant_of(&workspace().join("spin.toml"), dir, |text| {
        each_line(&text, |line| {
            let trimmed = line.trim_start();
            if trimmed.starts_with("dependencies_inherit_configuration") {
                removed += 1;
                None
            } else if trimmed.starts_with(ROUTER_DEPENDENCY) {
                granted += 1;
                Some(dependency_line(
                    ROUTER_DEPENDENCY,
                    router,
                    Some(router_grant),
                ))
            } else if trimmed.starts_with("\"kg:") && trimmed.ends_with('}') {
                granted += 1;
                Some(format!(
                    "{}, {COMPONENT_GRANTS} }}",
                    line.trim_end().trim_end_matches('}').trim_end()
                ))
            } else {
                Some(line.to_string())
            }
        })
    })?;
    if removed != 1 || granted != 5 {
        bail!(
            "spin.toml: expected one dependencies_inherit_configuration line and five kg: dependencies, found {removed} and {granted}"
        );
    }
    Ok(path)
}

/// `text` with each line replaced by what `edit` makes of it (`None` drops it), each
/// ending in a newline.
fn each_line(text: &str, mut edit: impl FnMut(&str) -> Option<String>) -> String {
    text.lines()
        .filter_map(&mut edit)
        .map(|line| line + "\n")
        .collect()
}

/// spin.toml's dependency line for `key` pointing at `component` (its path as a TOML
/// string), with `inherit_configuration = grant` when one is given.
fn dependency_line(key: &str, component: &Path, grant: Option<&str>) -> String {
    let path = serde_json::Value::String(component.display().to_string());
    match grant {
        Some(grant) => format!("{key} = {{ path = {path}, inherit_configuration = {grant} }}"),
        None => format!("{key} = {{ path = {path} }}"),
    }
}

/// The project's spin.toml (always that one: a pre-composed manifest has no dependency to
/// swap), written into `dir` with absolute paths, its router dependency pointing at `router`.
pub fn manifest_with_router(dir: &Path, router: &Path) -> Result<PathBuf> {
    manifest_with_dependency(dir, ROUTER_DEPENDENCY, router)
}

/// The project's spin.toml written into `dir` with absolute paths, the dispatcher's
/// dependency `key` (as spin.toml writes it, quoted) pointing at `component`.
pub fn manifest_with_dependency(dir: &Path, key: &str, component: &Path) -> Result<PathBuf> {
    let mut swapped = 0;
    let path = manifest_variant_of(&workspace().join("spin.toml"), dir, |text| {
        each_line(&text, |line| {
            if line.trim_start().starts_with(key) {
                swapped += 1;
                Some(dependency_line(key, component, None))
            } else {
                Some(line.to_string())
            }
        })
    })?;
    if swapped != 1 {
        bail!("spin.toml has {swapped} `{key} = …` dependency lines, not one");
    }
    Ok(path)
}
