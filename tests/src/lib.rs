//! Harness for end-to-end tests: starts the application on the host chosen at run time
//! (`KG_E2E_HOST=devhost|spin`, see `host`), devgraph beside it, and Redis where a test
//! shares state between instances; each finds its address from its startup line and stops
//! on drop.

pub mod auth;
pub mod bench_results;
pub mod capacity;
pub mod chat_client;
pub mod cut_proxy;
pub mod embedding_stub;
pub mod events;
mod host;
pub mod llm_stub;
pub mod oidc;
pub mod otlp;
pub mod process;
pub mod raw_http;
pub mod redis;
pub mod server_timing;
pub mod sse;

pub use host::{AppHost, HostKind, KeyValue, check, decode, devhost_binary, spin_binary};
use process::listening_url;

use anyhow::{Context, Result};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use tokio::process::{Child, Command};

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

/// The password test devgraphs use.
pub const GRAPH_PASSWORD: &str = "devgraph";

/// A devgraph (Neo4j Query API on Grafeo) with the demo dataset, on a free port.
pub struct Devgraph {
    pub url: String,
    child: Child,
}

impl Devgraph {
    /// With the demo dataset.
    pub async fn start() -> Result<Devgraph> {
        Self::launch(true).await
    }

    /// With an empty graph.
    pub async fn start_empty() -> Result<Devgraph> {
        Self::launch(false).await
    }

    /// With the demo dataset and extra command-line flags (e.g. `--inject-transient 0.2`).
    pub async fn start_with_args(extra: &[&str]) -> Result<Devgraph> {
        Self::launch_with(true, extra).await
    }

    async fn launch(demo: bool) -> Result<Devgraph> {
        Self::launch_with(demo, &[]).await
    }

    async fn launch_with(demo: bool, extra: &[&str]) -> Result<Devgraph> {
        let binary = workspace().join("target/release/devgraph");
        let mut args = vec!["--listen", "127.0.0.1:0", "--password", GRAPH_PASSWORD];
        if demo {
            args.push("--demo");
        }
        args.extend_from_slice(extra);
        let mut child = Command::new(&binary)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| {
                format!("starting {} (run scripts/setup.sh first)", binary.display())
            })?;
        let url = listening_url(&mut child, "devgraph", "listening on ").await?;
        Ok(Devgraph { url, child })
    }

    pub async fn stop(mut self) -> Result<()> {
        self.child.kill().await?;
        Ok(())
    }

    /// Freezes the server (SIGSTOP): connections are still accepted by the kernel, and
    /// nothing answers until [`Devgraph::resume`].
    ///
    /// Returns once every thread of the server has stopped: kill(2) only queues the
    /// signal, and a thread running on another core could otherwise still answer a
    /// request sent right after this returns.
    pub fn freeze(&self) -> Result<()> {
        self.signal(libc::SIGSTOP)?;
        let pid = self.child.id().context("devgraph has exited")?;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while !all_threads_stopped(pid) {
            anyhow::ensure!(
                std::time::Instant::now() < deadline,
                "devgraph {pid} did not stop within 2 s of SIGSTOP"
            );
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        Ok(())
    }

    /// Resumes a frozen server (SIGCONT): it then handles whatever queued up.
    pub fn resume(&self) -> Result<()> {
        self.signal(libc::SIGCONT)
    }

    /// Kills the server (SIGKILL) and waits for it to be gone: connections then fail.
    pub async fn kill(&mut self) -> Result<()> {
        self.child.kill().await?;
        Ok(())
    }

    fn signal(&self, signal: libc::c_int) -> Result<()> {
        let pid = self.child.id().context("devgraph has exited")?;
        // SAFETY: kill(2) on our own child's pid has no memory-safety preconditions.
        let rc = unsafe { libc::kill(pid as libc::pid_t, signal) };
        anyhow::ensure!(rc == 0, "kill({pid}, {signal}) failed");
        Ok(())
    }

    /// The variables that point the application at this graph.
    pub fn variables(&self) -> Vec<(&'static str, String)> {
        vec![
            ("neo4j_origin", self.url.clone()),
            ("neo4j_password", GRAPH_PASSWORD.to_string()),
        ]
    }

    /// Runs a READ statement straight against devgraph (no devhost), returning the rows.
    pub async fn query(&self, statement: &str) -> Result<Vec<Value>> {
        self.statement(&reqwest::Client::new(), statement, "READ")
            .await
    }

    /// [`Devgraph::query`] through the caller's client, whose connection stays open between
    /// calls, as the application's does: for benchmarks comparing with its round trips (a
    /// new client per statement adds a connection and a client's set-up to each).
    pub async fn query_on(&self, client: &reqwest::Client, statement: &str) -> Result<Vec<Value>> {
        self.statement(client, statement, "READ").await
    }

    /// Runs a WRITE statement straight against devgraph, to set up a test's data.
    pub async fn write(&self, statement: &str) -> Result<Vec<Value>> {
        self.statement(&reqwest::Client::new(), statement, "WRITE")
            .await
    }

    /// Creates `n` approved purchase orders `{id_prefix}-1` … `{id_prefix}-n` of `amount`
    /// EUR, placed with SUP-002 and charged to ACC-MAIN (so each can be paid), and returns
    /// their ids.
    pub async fn create_approved_orders(
        &self,
        id_prefix: &str,
        n: usize,
        amount: f64,
    ) -> Result<Vec<String>> {
        self.write(&format!(
            "MATCH (s:Supplier {{id: 'SUP-002'}}), (a:Account {{id: 'ACC-MAIN'}}) \
             UNWIND range(1, {n}) AS i \
             CREATE (o:PurchaseOrder {{id: '{id_prefix}-' + toString(i), status: 'approved', amount: {amount:.1}, currency: 'EUR'}}) \
             CREATE (o)-[:PLACED_WITH]->(s) CREATE (o)-[:CHARGED_TO]->(a)"
        ))
        .await?;
        Ok((1..=n).map(|i| format!("{id_prefix}-{i}")).collect())
    }

    async fn statement(
        &self,
        client: &reqwest::Client,
        statement: &str,
        mode: &str,
    ) -> Result<Vec<Value>> {
        // A transient error (say, one devgraph injected) rolled the statement back: retry.
        for _ in 0..20 {
            let body = self.statement_once(client, statement, mode).await?;
            let transient = body["errors"][0]["code"]
                .as_str()
                .is_some_and(|c| c.starts_with("Neo.TransientError."));
            if !transient {
                return Ok(body["data"]["values"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default());
            }
        }
        anyhow::bail!("the statement kept failing with transient errors: {statement}")
    }

    async fn statement_once(
        &self,
        client: &reqwest::Client,
        statement: &str,
        mode: &str,
    ) -> Result<Value> {
        let response = client
            .post(format!("{}/db/neo4j/query/v2", self.url))
            .basic_auth("neo4j", Some(GRAPH_PASSWORD))
            .header("x-devgraph-capture", "test") // not the application's: see devgraph::capture
            .json(&serde_json::json!({"statement": statement, "accessMode": mode}))
            .send()
            .await?;
        Ok(response.json().await?)
    }
}

/// The whole application as users run it: devgraph with the demo data, and the chosen host serving
/// the project's spin.toml pointed at it, with a private KV file.
pub struct Stack {
    pub graph: Devgraph,
    pub host: AppHost,
    pub dir: tempfile::TempDir,
}

impl Stack {
    /// With extra variables (e.g. an LLM stub's), on top of the graph's.
    pub async fn start_with(extra: &[(&str, String)]) -> Result<Stack> {
        let graph = Devgraph::start().await?;
        let dir = tempfile::tempdir()?;
        let mut variables: Vec<(&str, String)> = graph.variables();
        variables.extend(extra.iter().cloned());
        let host = AppHost::start(&app_manifest(), &dir.path().join("kv.db"), &variables).await?;
        Ok(Stack { graph, host, dir })
    }

    /// On a given devgraph (e.g. one started with flags), with extra variables.
    pub async fn start_with_graph(graph: Devgraph, extra: &[(&str, String)]) -> Result<Stack> {
        let dir = tempfile::tempdir()?;
        let mut variables: Vec<(&str, String)> = graph.variables();
        variables.extend(extra.iter().cloned());
        let host = AppHost::start(&app_manifest(), &dir.path().join("kv.db"), &variables).await?;
        Ok(Stack { graph, host, dir })
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
            .expect("starting devgraph and the application")
    }

    pub async fn start() -> Result<Stack> {
        let graph = Devgraph::start().await?;
        let dir = tempfile::tempdir()?;
        let host = AppHost::start(
            &app_manifest(),
            &dir.path().join("kv.db"),
            &graph.variables(),
        )
        .await?;
        Ok(Stack { graph, host, dir })
    }
}

/// Two instances of the application sharing one Redis (the production key-value store)
/// and one graph, behind no load balancer but the test itself: `a` on this run's host
/// (`KG_E2E_HOST`), `b` on devhost, both pointed at one scripted LLM.
pub struct Pair {
    pub a: AppHost,
    pub b: AppHost,
    pub graph: Devgraph,
    pub llm: llm_stub::ScriptedLlm,
    _redis: redis::RedisServer,
}

impl Pair {
    /// With extra variables on both instances.
    pub async fn start(extra: &[(&str, String)]) -> Result<Pair> {
        let redis = redis::RedisServer::start().await?;
        let graph = Devgraph::start().await?;
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

/// True when every thread of `pid` is stopped (state `T` in `/proc/<pid>/task/*/stat`).
/// The state follows the command name, which is in parentheses and may hold spaces, so
/// it is read after the last `)`.
fn all_threads_stopped(pid: u32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.flatten().all(|task| {
        std::fs::read_to_string(task.path().join("stat")).is_ok_and(|stat| {
            stat.rsplit_once(')')
                .and_then(|(_, rest)| rest.trim_start().chars().next())
                .is_some_and(|state| state == 'T' || state == 't')
        })
    })
}
