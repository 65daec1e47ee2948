//! Harness for end-to-end tests: starts the application on the host chosen at run time
//! (`KG_E2E_HOST=devhost|spin`, see `host`), the graph chosen at run time beside it
//! (`KG_E2E_GRAPH=devgraph|neo4j`, see `graph`), and Redis where a test
//! shares state between instances; each finds its address from its startup line and stops
//! on drop.

pub mod added_tool;
pub mod airports;
pub mod answering_stub;
pub mod auth;
pub mod bench_results;
pub mod capacity;
pub mod chat_client;
pub mod cut_proxy;
pub mod embedding_stub;
pub mod events;
mod graph;
mod host;
pub mod hr;
pub mod llm_stub;
pub mod mcp;
pub mod oci_registry;
pub mod oidc;
pub mod otlp;
pub mod process;
pub mod profiled;
pub mod python;
pub mod raw_http;
pub mod redis;
pub mod scale_graph;
pub mod server_timing;
pub mod sse;
pub mod startup;
pub mod swapped_router;

pub use graph::{GRAPH_PASSWORD, Graph, GraphKind, devgraph_only, not_on_neo4j};
pub use host::{AppHost, HostKind, KeyValue, check, decode, devhost_binary, spin_binary};

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// The workspace root (this crate lives in `tests/`).
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// The manifest this run serves: `KG_E2E_MANIFEST` (a path, relative to the workspace,
/// e.g. `dist/spin.toml` for the pre-composed build), else the project's `spin.toml`.
pub fn app_manifest() -> PathBuf {
    match std::env::var_os("KG_E2E_MANIFEST").filter(|p| !p.is_empty()) {
        Some(path) => workspace().join(path),
        None => workspace().join("spin.toml"),
    }
}

/// Whether this run serves a pre-composed manifest (no dependencies table), where tests
/// about dependency capability grants do not apply.
pub fn manifest_is_composed() -> bool {
    std::fs::read_to_string(app_manifest())
        .map(|text| !text.contains(".dependencies]"))
        .unwrap_or(false)
}

/// This run's manifest, rewritten with absolute paths so a copy works from anywhere;
/// `edit` may change it further (e.g. allowed hosts or inheritance) for a test.
pub fn manifest_variant(dir: &Path, edit: impl FnOnce(String) -> String) -> Result<PathBuf> {
    manifest_variant_of(&app_manifest(), dir, edit)
}

/// A copy of this run's manifest in `dir` whose `/catalog` mount is `catalog` (a folder,
/// absolute or of the workspace, holding a graph-profile.toml and an actions.toml), copied
/// into `dir` (Spin mounts only from inside the manifest's folder).
pub fn manifest_with_catalog(dir: &Path, catalog: impl AsRef<Path>) -> Result<PathBuf> {
    const DEMO: &str = r#"{ source = "catalog", destination = "/catalog" }"#;
    const OURS: &str = r#"{ source = "test-catalog", destination = "/catalog" }"#;
    let mut mounts = 0;
    let path = manifest_variant(dir, |text| {
        mounts = text.matches(DEMO).count();
        text.replace(DEMO, OURS)
    })?;
    anyhow::ensure!(
        mounts == 1,
        "the manifest mounts `catalog` at /catalog {mounts} times, not once"
    );
    let mounted = dir.join("test-catalog");
    std::fs::create_dir_all(&mounted)?;
    for entry in std::fs::read_dir(workspace().join(catalog))? {
        let entry = entry?;
        std::fs::copy(entry.path(), mounted.join(entry.file_name()))?;
    }
    Ok(path)
}

/// `manifest_variant` of a given manifest.
pub fn manifest_variant_of(
    manifest: &Path,
    dir: &Path,
    edit: impl FnOnce(String) -> String,
) -> Result<PathBuf> {
    let text = std::fs::read_to_string(manifest)?;
    let base = manifest.parent().context("a manifest has a folder")?;
    let text = absolute_paths(&text, base, dir)?;
    let path = dir.join("spin.toml");
    std::fs::write(&path, edit(text))?;
    Ok(path)
}

/// Every relative `source = "…"` and `path = "…"` made absolute against `base`, except
/// `files` mounts (`{ source = "…"`): Spin takes those only from inside the manifest's
/// folder, so each is copied into `dir` under the same relative name instead.
fn absolute_paths(text: &str, base: &Path, dir: &Path) -> Result<String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        let next = ["source = \"", "path = \""]
            .iter()
            .filter_map(|key| key_at(rest, key).map(|at| (at, key.len())))
            .min();
        let Some((at, len)) = next else {
            out.push_str(rest);
            return Ok(out);
        };
        let is_mount = rest[at..].starts_with("source") && rest[..at].trim_end().ends_with('{');
        let value_start = at + len;
        out.push_str(&rest[..value_start]);
        rest = &rest[value_start..];
        let value = rest.split('"').next().unwrap_or_default();
        if is_mount {
            copy_dir(&base.join(value), &dir.join(value))?;
        } else if !rest.starts_with('/') {
            out.push_str(&base.display().to_string());
            out.push('/');
        }
    }
}

/// Where `key` first occurs as a whole key: not as the tail of another (the variable
/// `llm_base_path = "{{ llm_base_path }}"` is not a `path = "…"`).
fn key_at(text: &str, key: &str) -> Option<usize> {
    text.match_indices(key).map(|(at, _)| at).find(|&at| {
        text[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
    })
}

fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from).with_context(|| format!("reading {}", from.display()))? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// A server that answers nothing useful but records every request: proves that a request
/// was never sent.
pub async fn recording_server() -> wiremock::MockServer {
    wiremock::MockServer::start().await
}

/// The whole application as users run it: the graph with the demo data, and the chosen host serving
/// the project's spin.toml pointed at it, with a private KV file.
pub struct Stack {
    pub graph: Graph,
    pub host: AppHost,
    pub dir: tempfile::TempDir,
}

impl Stack {
    /// `manifest` served on `graph` with the graph's variables and `extra`, its key-value
    /// store in `dir` (which a test's own manifest may live in too).
    pub async fn serve(
        manifest: &Path,
        graph: Graph,
        dir: tempfile::TempDir,
        extra: &[(&str, String)],
    ) -> Result<Stack> {
        let mut variables: Vec<(&str, String)> = graph.variables();
        variables.extend(extra.iter().cloned());
        let host = AppHost::start(manifest, &dir.path().join("kv.db"), &variables).await?;
        Ok(Stack { graph, host, dir })
    }

    /// With extra variables (e.g. an LLM stub's), on top of the graph's.
    pub async fn start_with(extra: &[(&str, String)]) -> Result<Stack> {
        let graph = Graph::start().await?;
        Stack::serve(&app_manifest(), graph, tempfile::tempdir()?, extra).await
    }

    /// On a given graph (e.g. a devgraph started with flags), with extra variables.
    pub async fn start_with_graph(graph: Graph, extra: &[(&str, String)]) -> Result<Stack> {
        Stack::serve(&app_manifest(), graph, tempfile::tempdir()?, extra).await
    }

    /// The chat suites' stack: the demo graph, the variables of the stubs in `stubs` (an
    /// LLM's, a trace receiver's…) and the settings under test. Panics when it cannot
    /// start: every test needs it.
    pub async fn with_stubs(stubs: &[Vec<(&str, String)>], settings: &[(&str, &str)]) -> Stack {
        let mut variables: Vec<(&str, String)> = stubs.concat();
        variables.extend(
            settings
                .iter()
                .map(|(name, value)| (*name, value.to_string())),
        );
        Stack::start_with(&variables)
            .await
            .expect("starting the graph and the application")
    }

    pub async fn start() -> Result<Stack> {
        Stack::start_with(&[]).await
    }
}

/// Two instances of the application sharing one Redis (the production key-value store)
/// and one graph, behind no load balancer but the test itself: `a` on this run's host
/// (`KG_E2E_HOST`), `b` on devhost, both pointed at one scripted LLM.
pub struct Pair {
    pub a: AppHost,
    pub b: AppHost,
    pub graph: Graph,
    pub llm: llm_stub::ScriptedLlm,
    _redis: redis::RedisServer,
}

impl Pair {
    /// With extra variables on both instances.
    pub async fn start(extra: &[(&str, String)]) -> Result<Pair> {
        let redis = redis::RedisServer::start().await?;
        let graph = Graph::start().await?;
        let llm = llm_stub::ScriptedLlm::start().await;
        let mut variables = graph.variables();
        variables.extend(llm.variables());
        variables.extend(extra.iter().cloned());
        let kv = KeyValue::Redis(redis.url.clone());
        let manifest = app_manifest();
        let a = AppHost::start_on(HostKind::from_env(), &manifest, &kv, &variables).await?;
        let b = AppHost::start_on(HostKind::Devhost, &manifest, &kv, &variables).await?;
        eprintln!(
            "scale-out: a on {} ({}), b on devhost ({})",
            a.kind.name(),
            a.url,
            b.url
        );
        Ok(Pair {
            a,
            b,
            graph,
            llm,
            _redis: redis,
        })
    }
}
