//! Harness for end-to-end tests: starts `target/release/devhost` on a manifest, finds its
//! address from its startup line, and stops it on drop.

pub mod embedding_stub;
pub mod llm_stub;

use anyhow::{Context, Result, bail};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// The workspace root (this crate lives in `tests/`).
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

pub fn devhost_binary() -> PathBuf {
    std::env::var_os("DEVHOST_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("target/release/devhost"))
}

/// The project's spin.toml, rewritten with absolute paths so a copy works from anywhere;
/// `edit` may change it further (e.g. allowed hosts or inheritance) for a test.
pub fn manifest_variant(dir: &Path, edit: impl FnOnce(String) -> String) -> Result<PathBuf> {
    let text = std::fs::read_to_string(workspace().join("spin.toml"))?;
    let target = workspace().join("target");
    let text = text.replace("\"target/", &format!("\"{}/", target.display()));
    let catalog = workspace().join("catalog");
    let text = text.replace(
        "source = \"catalog\"",
        &format!("source = \"{}\"", catalog.display()),
    );
    let path = dir.join("spin.toml");
    std::fs::write(&path, edit(text))?;
    Ok(path)
}

pub struct Devhost {
    pub url: String,
    child: Child,
}

impl Devhost {
    /// Starts devhost and waits for its "listening on" line (compiling six components can
    /// take a few seconds).
    pub async fn start(
        manifest: &Path,
        kv_path: &Path,
        variables: &[(&str, String)],
    ) -> Result<Devhost> {
        let mut command = Command::new(devhost_binary());
        command
            .arg("--manifest")
            .arg(manifest)
            .arg("--listen")
            .arg("127.0.0.1:0")
            .arg("--kv-path")
            .arg(kv_path)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        for (name, value) in variables {
            command.arg("--variable").arg(format!("{name}={value}"));
        }
        let mut child = command.spawn().with_context(|| {
            format!(
                "starting {} (run scripts/setup.sh first)",
                devhost_binary().display()
            )
        })?;
        let url = listening_url(&mut child, "devhost").await?;
        Ok(Devhost { url, child })
    }

    pub async fn stop(mut self) -> Result<()> {
        self.child.kill().await?;
        Ok(())
    }

    pub async fn get(&self, path: &str) -> Result<(u16, Value)> {
        let response = reqwest::get(format!("{}{path}", self.url)).await?;
        decode(response).await
    }

    pub async fn send(&self, method: &str, path: &str, body: &str) -> Result<(u16, Value)> {
        let method = reqwest::Method::from_bytes(method.as_bytes())?;
        let response = reqwest::Client::new()
            .request(method, format!("{}{path}", self.url))
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await?;
        decode(response).await
    }
}

async fn decode(response: reqwest::Response) -> Result<(u16, Value)> {
    let status = response.status().as_u16();
    let text = response.text().await?;
    let json = serde_json::from_str(&text).unwrap_or(Value::String(text));
    Ok((status, json))
}

/// Runs `devhost --check` on a manifest: Ok(stdout) or Err(stderr).
pub async fn check(manifest: &Path) -> Result<std::result::Result<String, String>> {
    let output = Command::new(devhost_binary())
        .arg("--check")
        .arg("--manifest")
        .arg(manifest)
        .output()
        .await?;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    Ok(if output.status.success() {
        Ok(stdout)
    } else {
        Err(stderr)
    })
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

    async fn launch(demo: bool) -> Result<Devgraph> {
        let binary = workspace().join("target/release/devgraph");
        let mut args = vec!["--listen", "127.0.0.1:0", "--password", GRAPH_PASSWORD];
        if demo {
            args.push("--demo");
        }
        let mut child = Command::new(&binary)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| {
                format!("starting {} (run scripts/setup.sh first)", binary.display())
            })?;
        let url = listening_url(&mut child, "devgraph").await?;
        Ok(Devgraph { url, child })
    }

    pub async fn stop(mut self) -> Result<()> {
        self.child.kill().await?;
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
        self.statement(statement, "READ").await
    }

    /// Runs a WRITE statement straight against devgraph, to set up a test's data.
    pub async fn write(&self, statement: &str) -> Result<Vec<Value>> {
        self.statement(statement, "WRITE").await
    }

    async fn statement(&self, statement: &str, mode: &str) -> Result<Vec<Value>> {
        let response = reqwest::Client::new()
            .post(format!("{}/db/neo4j/query/v2", self.url))
            .basic_auth("neo4j", Some(GRAPH_PASSWORD))
            .json(&serde_json::json!({"statement": statement, "accessMode": mode}))
            .send()
            .await?;
        let body: Value = response.json().await?;
        Ok(body["data"]["values"]
            .as_array()
            .cloned()
            .unwrap_or_default())
    }
}

/// Reads a child's stdout until its "listening on http://…" line; keeps draining after.
async fn listening_url(child: &mut Child, what: &str) -> Result<String> {
    let stdout = child.stdout.take().context("child stdout")?;
    let mut lines = BufReader::new(stdout).lines();
    let url = tokio::time::timeout(Duration::from_secs(120), async {
        while let Some(line) = lines.next_line().await? {
            if let Some(rest) = line.split("listening on ").nth(1) {
                return Ok(rest
                    .split_whitespace()
                    .next()
                    .unwrap_or_default()
                    .to_string());
            }
        }
        bail!("{what} exited before listening")
    })
    .await
    .with_context(|| format!("{what} did not start within 120 s"))??;
    // Keep draining stdout so the child never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Ok(url)
}

/// The whole application as users run it: devgraph with the demo data, and devhost serving
/// the project's spin.toml pointed at it, with a private KV file.
pub struct Stack {
    pub graph: Devgraph,
    pub host: Devhost,
    pub dir: tempfile::TempDir,
}

impl Stack {
    /// With extra variables (e.g. an LLM stub's), on top of the graph's.
    pub async fn start_with(extra: &[(&str, String)]) -> Result<Stack> {
        let graph = Devgraph::start().await?;
        let dir = tempfile::tempdir()?;
        let mut variables: Vec<(&str, String)> = graph.variables();
        variables.extend(extra.iter().cloned());
        let host = Devhost::start(
            &workspace().join("spin.toml"),
            &dir.path().join("kv.db"),
            &variables,
        )
        .await?;
        Ok(Stack { graph, host, dir })
    }

    pub async fn start() -> Result<Stack> {
        let graph = Devgraph::start().await?;
        let dir = tempfile::tempdir()?;
        let host = Devhost::start(
            &workspace().join("spin.toml"),
            &dir.path().join("kv.db"),
            &graph.variables(),
        )
        .await?;
        Ok(Stack { graph, host, dir })
    }
}
