//! The graph a test talks to, chosen at run time: `KG_E2E_GRAPH=devgraph` (the default)
//! starts `target/release/devgraph`, our Query API on Grafeo, one process per graph;
//! `KG_E2E_GRAPH=neo4j` leases a real Neo4j Community server of its own from the pool in
//! `devtools/neo4j` (`Pool.java`): the pool at `KG_E2E_NEO4J_POOL` (host:port; what
//! `scripts/test.sh` starts once for a whole pass), else one this test binary starts and
//! stops. Either way the graph holds the demo dataset (or nothing), answers on
//! 127.0.0.1 with basic auth, and is gone when the test drops it.

use crate::cut_proxy::CutProxy;
use crate::process::listening_url;
use crate::workspace;
use anyhow::{Context, Result, bail};
use serde_json::Value;
use std::io::{BufRead, BufReader as StdBufReader};
use std::process::Stdio;
use std::sync::OnceLock;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, Command};

/// The password of every test graph, devgraph's and Neo4j's.
pub const GRAPH_PASSWORD: &str = "devgraph";

/// Which graph this test run uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GraphKind {
    Devgraph,
    Neo4j,
}

impl GraphKind {
    /// From `KG_E2E_GRAPH`; an unknown value panics (a run never silently uses another graph).
    pub fn from_env() -> GraphKind {
        match std::env::var("KG_E2E_GRAPH").as_deref() {
            Err(_) | Ok("") | Ok("devgraph") => GraphKind::Devgraph,
            Ok("neo4j") => GraphKind::Neo4j,
            Ok(other) => panic!("KG_E2E_GRAPH must be `devgraph` or `neo4j`, not `{other}`"),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            GraphKind::Devgraph => "devgraph",
            GraphKind::Neo4j => "neo4j",
        }
    }
}

/// True (and says why) when this run's graph is Neo4j and the test needs something only
/// devgraph has; the test then returns early.
pub fn devgraph_only(reason: &str) -> bool {
    if GraphKind::from_env() == GraphKind::Neo4j {
        not_on_neo4j(&format!("SKIPPED (devgraph only): {reason}"));
        return true;
    }
    false
}

/// Says what of a test does not run on Neo4j, and why: on stderr (which cargo shows only
/// for a failed test) and, when `KG_E2E_SKIP_LOG` names a file, as a line appended to it,
/// which `scripts/test.sh` prints after the pass.
pub fn not_on_neo4j(what: &str) {
    let test = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    let binary = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().to_string()))
        .map(|s| s.split('-').next().unwrap_or_default().to_string())
        .unwrap_or_default();
    let line = format!("{binary}::{test}: {what}");
    eprintln!("{line}");
    if let Some(path) = std::env::var_os("KG_E2E_SKIP_LOG").filter(|p| !p.is_empty()) {
        use std::io::Write;
        if let Ok(mut file) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            // One write of the whole line: tests running side by side append to the same
            // file, and O_APPEND keeps a single small write whole.
            let _ = file.write_all(format!("{line}\n").as_bytes());
        }
    }
}

/// What keeps a graph alive: devgraph's process, or a Neo4j lease (its connection to the
/// pool; closing it stops the server) and the proxy in front of it, which stands in for
/// devgraph's SIGSTOP and SIGKILL (one JVM serves every leased server, so a signal would
/// stop them all).
enum Server {
    Devgraph(Child),
    Neo4j { _lease: TcpStream, proxy: CutProxy },
}

/// A graph (the Neo4j Query API v2) on a free port.
pub struct Graph {
    /// Where the application and the test send their requests.
    pub url: String,
    pub kind: GraphKind,
    server: Server,
}

impl Graph {
    /// With the demo dataset.
    pub async fn start() -> Result<Graph> {
        Self::launch(true, &[]).await
    }

    /// With an empty graph.
    pub async fn start_empty() -> Result<Graph> {
        Self::launch(false, &[]).await
    }

    /// With the demo dataset and extra devgraph flags (e.g. `--inject-transient 0.2`):
    /// devgraph only; a test that uses this checks [`devgraph_only`] first.
    pub async fn start_with_args(extra: &[&str]) -> Result<Graph> {
        Self::launch(true, extra).await
    }

    async fn launch(demo: bool, extra: &[&str]) -> Result<Graph> {
        match GraphKind::from_env() {
            GraphKind::Devgraph => Self::launch_devgraph(demo, extra).await,
            GraphKind::Neo4j => {
                if !extra.is_empty() {
                    bail!(
                        "devgraph's flags {extra:?} have no Neo4j equivalent: check devgraph_only()"
                    );
                }
                Self::lease_neo4j(demo).await
            }
        }
    }

    async fn launch_devgraph(demo: bool, extra: &[&str]) -> Result<Graph> {
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
        Ok(Graph {
            url,
            kind: GraphKind::Devgraph,
            server: Server::Devgraph(child),
        })
    }

    async fn lease_neo4j(demo: bool) -> Result<Graph> {
        let pool = neo4j_pool()?;
        let mut lease = TcpStream::connect(&pool)
            .await
            .with_context(|| format!("connecting to the Neo4j pool at {pool}"))?;
        lease
            .write_all(if demo { b"demo\n" } else { b"empty\n" })
            .await?;
        let mut line = String::new();
        let mut reader = BufReader::new(&mut lease);
        tokio::time::timeout(
            std::time::Duration::from_secs(120),
            reader.read_line(&mut line),
        )
        .await
        .context("the Neo4j pool gave no server within 120 s")??;
        // `ready http://127.0.0.1:P bolt://127.0.0.1:Q in N ms`
        let Some(url) = line
            .strip_prefix("ready ")
            .and_then(|rest| rest.split(' ').next())
        else {
            bail!("the Neo4j pool answered `{}`", line.trim_end());
        };
        let proxy = CutProxy::start(url).await?;
        Ok(Graph {
            url: proxy.url.clone(),
            kind: GraphKind::Neo4j,
            server: Server::Neo4j {
                _lease: lease,
                proxy,
            },
        })
    }

    pub async fn stop(self) -> Result<()> {
        if let Server::Devgraph(mut child) = self.server {
            child.kill().await?;
        }
        Ok(())
    }

    /// Freezes the graph: connections are still accepted, and nothing answers until
    /// [`Graph::resume`]. Devgraph gets SIGSTOP (this returns once every thread of it has
    /// stopped: kill(2) only queues the signal, and a thread running on another core
    /// could otherwise still answer a request sent right after this returns); Neo4j's
    /// proxy holds every byte, both ways.
    pub fn freeze(&self) -> Result<()> {
        match &self.server {
            Server::Devgraph(child) => {
                signal(child, libc::SIGSTOP)?;
                let pid = child.id().context("devgraph has exited")?;
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
            Server::Neo4j { proxy, .. } => {
                proxy.hold(true);
                Ok(())
            }
        }
    }

    /// Resumes a frozen graph: it then handles whatever queued up.
    pub fn resume(&self) -> Result<()> {
        match &self.server {
            Server::Devgraph(child) => signal(child, libc::SIGCONT),
            Server::Neo4j { proxy, .. } => {
                proxy.hold(false);
                Ok(())
            }
        }
    }

    /// Kills the graph: open connections are cut and new ones refused. Devgraph gets
    /// SIGKILL; Neo4j's proxy stops listening and cuts every connection (the server
    /// behind it lives on until the lease ends).
    pub async fn kill(&mut self) -> Result<()> {
        match &mut self.server {
            Server::Devgraph(child) => child.kill().await?,
            Server::Neo4j { proxy, .. } => proxy.close(),
        }
        Ok(())
    }

    /// The variables that point the application at this graph.
    pub fn variables(&self) -> Vec<(&'static str, String)> {
        vec![
            ("neo4j_origin", self.url.clone()),
            ("neo4j_password", GRAPH_PASSWORD.to_string()),
        ]
    }

    /// Runs a READ statement straight against the graph (no application), returning the rows.
    pub async fn query(&self, statement: &str) -> Result<Vec<Value>> {
        self.statement(&reqwest::Client::new(), statement, "READ")
            .await
    }

    /// [`Graph::query`] through the caller's client, whose connection stays open between
    /// calls, as the application's does: for benchmarks comparing with its round trips (a
    /// new client per statement adds a connection and a client's set-up to each).
    pub async fn query_on(&self, client: &reqwest::Client, statement: &str) -> Result<Vec<Value>> {
        self.statement(client, statement, "READ").await
    }

    /// Runs a WRITE statement straight against the graph, to set up a test's data.
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

    /// [`Graph::create_approved_orders`], then of every five orders (by number) all but the
    /// first `payable_per_five` put back to draft, so a batch paying them all meets
    /// payable and failing orders alike; their ids.
    pub async fn create_payable_orders(
        &self,
        id_prefix: &str,
        n: usize,
        payable_per_five: usize,
    ) -> Result<Vec<String>> {
        let ids = self.create_approved_orders(id_prefix, n, 10.0).await?;
        self.write(&format!(
            "MATCH (o:PurchaseOrder) WHERE o.id STARTS WITH '{id_prefix}-' \
             AND toInteger(substring(o.id, {})) % 5 >= {payable_per_five} SET o.status = 'draft'",
            id_prefix.len() + 1
        ))
        .await?;
        Ok(ids)
    }

    async fn statement(
        &self,
        client: &reqwest::Client,
        statement: &str,
        mode: &str,
    ) -> Result<Vec<Value>> {
        // A transient error (one devgraph injected, a deadlock on Neo4j) rolled the
        // statement back: retry.
        for _ in 0..20 {
            let body = self.statement_once(client, statement, mode).await?;
            let code = body["errors"][0]["code"].as_str();
            if code.is_some_and(|c| c.starts_with("Neo.TransientError.")) {
                continue;
            }
            if let Some(code) = code {
                bail!(
                    "the graph refused `{statement}`: {code}: {}",
                    body["errors"][0]["message"]
                );
            }
            return Ok(body["data"]["values"]
                .as_array()
                .cloned()
                .unwrap_or_default());
        }
        bail!("the statement kept failing with transient errors: {statement}")
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

/// The Neo4j pool's address: `KG_E2E_NEO4J_POOL`, else a pool this test binary starts on
/// first use and that stops when the binary exits (its standard input, kept open by this
/// process, closes then; `--until-stdin-closes`).
fn neo4j_pool() -> Result<String> {
    if let Some(address) = std::env::var("KG_E2E_NEO4J_POOL")
        .ok()
        .filter(|a| !a.is_empty())
    {
        return Ok(address);
    }
    static POOL: OnceLock<std::result::Result<String, String>> = OnceLock::new();
    POOL.get_or_init(|| start_pool().map_err(|e| format!("{e:#}")))
        .clone()
        .map_err(|e| anyhow::anyhow!("starting a Neo4j pool: {e}"))
}

fn start_pool() -> Result<String> {
    let cypher = workspace().join("target/neo4j/demo.cypher");
    std::fs::create_dir_all(cypher.parent().context("a parent")?)?;
    let demo = std::process::Command::new(workspace().join("target/release/devgraph"))
        .arg("--demo-cypher")
        .output()
        .context("running devgraph --demo-cypher (run scripts/setup.sh first)")?;
    anyhow::ensure!(demo.status.success(), "devgraph --demo-cypher failed");
    std::fs::write(&cypher, demo.stdout)?;
    let mut child = std::process::Command::new(workspace().join("devtools/neo4j/run.sh"))
        .arg("--pool")
        .arg("--cypher")
        .arg(&cypher)
        .arg("--until-stdin-closes")
        .env("NEO4J_PASSWORD", GRAPH_PASSWORD)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .context("starting devtools/neo4j/run.sh --pool (needs Java 17+ and Maven)")?;
    let stdout = child.stdout.take().context("the pool's stdout")?;
    for line in StdBufReader::new(stdout).lines() {
        let line = line?;
        if let Some(rest) = line.split("listening on ").nth(1) {
            let address = rest
                .split([',', ' '])
                .next()
                .unwrap_or_default()
                .to_string();
            eprintln!("{line}");
            // The child and its stdin live as long as this process: leak them on purpose.
            std::mem::forget(child);
            return Ok(address);
        }
    }
    bail!("the Neo4j pool exited before it was ready (see its output above)")
}

fn signal(child: &Child, signal: libc::c_int) -> Result<()> {
    let pid = child.id().context("devgraph has exited")?;
    // SAFETY: kill(2) on our own child's pid has no memory-safety preconditions.
    let rc = unsafe { libc::kill(pid as libc::pid_t, signal) };
    anyhow::ensure!(rc == 0, "kill({pid}, {signal}) failed");
    Ok(())
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
