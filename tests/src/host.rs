//! The application's host, chosen at run time: `KG_E2E_HOST=devhost` (the default) runs
//! `target/release/devhost`, `KG_E2E_HOST=spin` runs `spin up` (the binary in `SPIN_BIN`,
//! else `spin` on PATH) on the very same manifest and `.wasm` files. Both get the same
//! Spin runtime-config file for their key-value store, so a test states its state once.

use crate::process::listening_url;
use crate::{auth, workspace};
use anyhow::{Context, Result, bail};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use tokio::process::{Child, Command};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostKind {
    Devhost,
    Spin,
}

impl HostKind {
    /// The host of this test run, from `KG_E2E_HOST`. An unknown value or `spin` without a
    /// Spin binary panics: a test run never silently falls back to another host.
    pub fn from_env() -> HostKind {
        match std::env::var("KG_E2E_HOST").as_deref() {
            Err(_) | Ok("") | Ok("devhost") => HostKind::Devhost,
            Ok("spin") => {
                if spin_binary().is_none() {
                    panic!("KG_E2E_HOST=spin but no Spin binary: set SPIN_BIN or put spin on PATH");
                }
                HostKind::Spin
            }
            Ok(other) => panic!("KG_E2E_HOST must be `devhost` or `spin`, not `{other}`"),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            HostKind::Devhost => "devhost",
            HostKind::Spin => "spin",
        }
    }
}

pub fn devhost_binary() -> PathBuf {
    std::env::var_os("DEVHOST_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("target/release/devhost"))
}

/// `SPIN_BIN`, else the first `spin` on PATH.
pub fn spin_binary() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("SPIN_BIN").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(path));
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join("spin"))
        .find(|candidate| candidate.is_file())
}

/// Where the application's `default` key-value store lives.
#[derive(Debug, Clone)]
pub enum KeyValue {
    /// Spin's local store: a SQLite file private to the test.
    File(PathBuf),
    /// A Redis shared by every instance pointed at it.
    Redis(String),
}

impl KeyValue {
    /// The Spin runtime-config file that says so (read by Spin and devhost alike).
    fn runtime_config(&self) -> String {
        match self {
            KeyValue::File(path) => format!(
                "[key_value_store.default]\ntype = \"spin\"\npath = {}\n",
                toml_string(&path.display().to_string())
            ),
            KeyValue::Redis(url) => format!(
                "[key_value_store.default]\ntype = \"redis\"\nurl = {}\n",
                toml_string(url)
            ),
        }
    }
}

fn toml_string(text: &str) -> String {
    serde_json::Value::String(text.to_string()).to_string()
}

/// A running instance of the application.
pub struct AppHost {
    pub url: String,
    pub kind: HostKind,
    /// The credential `get` and `send` present (`Authorization: Bearer …`): the admin test
    /// key unless a test changes it; `None` sends no credential.
    pub key: Option<String>,
    client: reqwest::Client,
    child: Child,
    /// Spin's logs and the runtime-config file live here until the host stops.
    _state: tempfile::TempDir,
    /// Every line the host wrote to stderr so far (also passed on to the test's stderr).
    stderr_lines: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl AppHost {
    /// On this run's host, with a private key-value file at `kv_path`.
    pub async fn start(
        manifest: &Path,
        kv_path: &Path,
        variables: &[(&str, String)],
    ) -> Result<AppHost> {
        Self::start_on(
            HostKind::from_env(),
            manifest,
            &KeyValue::File(kv_path.to_path_buf()),
            variables,
        )
        .await
    }

    /// On a given host with a given store (two-instance tests mix hosts on one Redis).
    /// Unless `variables` set them, the application admits every test key of `auth`
    /// (`auth_api_keys`) and limits no request rate (`rate_limit_requests_per_minute=0`).
    pub async fn start_on(
        kind: HostKind,
        manifest: &Path,
        kv: &KeyValue,
        variables: &[(&str, String)],
    ) -> Result<AppHost> {
        Self::launch(kind, manifest, kv, variables, &[]).await
    }

    /// On either host, with flags of the host's own (Spin's `--cache`…).
    pub async fn start_with_host_flags(
        kind: HostKind,
        manifest: &Path,
        kv: &KeyValue,
        variables: &[(&str, String)],
        flags: &[&str],
    ) -> Result<AppHost> {
        Self::launch(kind, manifest, kv, variables, flags).await
    }

    /// On devhost, with flags of its own (`--pool-instances 2`…): tests of devhost itself.
    pub async fn start_devhost_with_flags(
        manifest: &Path,
        kv: &KeyValue,
        variables: &[(&str, String)],
        flags: &[&str],
    ) -> Result<AppHost> {
        Self::launch(HostKind::Devhost, manifest, kv, variables, flags).await
    }

    async fn launch(
        kind: HostKind,
        manifest: &Path,
        kv: &KeyValue,
        variables: &[(&str, String)],
        host_flags: &[&str],
    ) -> Result<AppHost> {
        let state = tempfile::tempdir()?;
        let runtime_config = state.path().join("runtime-config.toml");
        std::fs::write(&runtime_config, kv.runtime_config())?;
        let mut command = match kind {
            HostKind::Devhost => {
                let mut command = Command::new(devhost_binary());
                command.arg("--manifest").arg(manifest);
                command
            }
            HostKind::Spin => {
                let binary = spin_binary().context("no Spin binary (SPIN_BIN or PATH)")?;
                let mut command = Command::new(binary);
                command
                    .arg("up")
                    .arg("--from")
                    .arg(manifest)
                    .arg("--log-dir")
                    .arg(state.path().join("logs"))
                    // Spin's own state (`.spin/` beside the manifest by default) stays
                    // private to the test.
                    .arg("--state-dir")
                    .arg(state.path().join("state"))
                    .env("RUST_LOG", "spin=warn");
                command
            }
        };
        // Its own process group: `spin up` runs the trigger as a child process, which
        // killing `spin up` alone would leave running (see Drop).
        command.process_group(0);
        command
            .arg("--listen")
            .arg("127.0.0.1:0")
            .arg("--runtime-config-file")
            .arg(&runtime_config)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        command.args(host_flags);
        for (name, value) in variables {
            command.arg("--variable").arg(format!("{name}={value}"));
        }
        for (name, value) in [
            ("auth_api_keys", auth::all_test_keys()),
            ("rate_limit_requests_per_minute", "0".to_string()),
        ] {
            if !variables.iter().any(|(set, _)| *set == name) {
                command.arg("--variable").arg(format!("{name}={value}"));
            }
        }
        let mut child = command
            .spawn()
            .with_context(|| format!("starting {} (run scripts/setup.sh first)", kind.name()))?;
        let stderr_lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        if let Some(stderr) = child.stderr.take() {
            let stderr = std::fs::File::from(stderr.into_owned_fd()?);
            let kept = stderr_lines.clone();
            // A thread of its own, not a task: the host must never block on a full pipe,
            // even while the test's runtime is not being driven.
            std::thread::spawn(move || pass_on_stderr(stderr, kept));
        }
        let marker = match kind {
            HostKind::Devhost => "listening on ",
            HostKind::Spin => "Serving ",
        };
        let url = listening_url(&mut child, kind.name(), marker).await?;
        Ok(AppHost {
            url,
            kind,
            key: Some(auth::ADMIN.to_string()),
            client: reqwest::Client::new(),
            child,
            _state: state,
            stderr_lines,
        })
    }

    /// The lines the host (and the components in it) wrote to stderr so far; on Spin, also
    /// what its log directory holds for the components.
    pub fn stderr_lines(&self) -> Vec<String> {
        let mut lines = self
            .stderr_lines
            .lock()
            .map(|l| l.clone())
            .unwrap_or_default();
        if let Ok(logs) = std::fs::read_dir(self._state.path().join("logs")) {
            for log in logs.flatten() {
                if log.file_name().to_string_lossy().ends_with("_stderr.txt") {
                    let text = std::fs::read_to_string(log.path()).unwrap_or_default();
                    lines.extend(text.lines().map(str::to_string));
                }
            }
        }
        lines
    }

    pub async fn stop(mut self) -> Result<()> {
        self.kill_group();
        self.child.kill().await?;
        Ok(())
    }

    /// Kills the host's whole process group (Spin's trigger child included).
    fn kill_group(&self) {
        if let Some(pid) = self.child.id().and_then(|p| i32::try_from(p).ok()) {
            // SAFETY: kill(2) with a negative pid signals that process group; the group is
            // the one this harness created for the host (process_group(0) above).
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
    }

    /// Resident memory of the host's whole process group (Spin's trigger child included),
    /// from /proc (Linux), in KiB.
    pub fn rss_kib(&self) -> Option<u64> {
        let group = self.child.id()?.to_string();
        let mut total = 0;
        for entry in std::fs::read_dir("/proc").ok()?.flatten() {
            let path = entry.path();
            let Ok(stat) = std::fs::read_to_string(path.join("stat")) else {
                continue;
            };
            // Field 5 (pgrp) comes after the parenthesised command name.
            let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
            if after_name.split_whitespace().nth(2) != Some(group.as_str()) {
                continue;
            }
            let status = std::fs::read_to_string(path.join("status")).unwrap_or_default();
            total += status
                .lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
                .unwrap_or(0);
        }
        Some(total)
    }

    /// `GET path` with this host's credential.
    pub async fn get(&self, path: &str) -> Result<(u16, Value)> {
        self.get_as(self.key.as_deref(), path).await
    }

    /// A request with this host's credential (a JSON body unless it is a GET).
    pub async fn send(&self, method: &str, path: &str, body: &str) -> Result<(u16, Value)> {
        self.send_as(self.key.as_deref(), method, path, body).await
    }

    /// `GET path` with `key` as the bearer credential (`None`: no `Authorization`).
    pub async fn get_as(&self, key: Option<&str>, path: &str) -> Result<(u16, Value)> {
        decode(self.request_as(key, "GET", path, "").await?).await
    }

    /// A request with `key` as the bearer credential (`None`: no `Authorization`).
    pub async fn send_as(
        &self,
        key: Option<&str>,
        method: &str,
        path: &str,
        body: &str,
    ) -> Result<(u16, Value)> {
        decode(self.request_as(key, method, path, body).await?).await
    }

    /// The raw response (status, headers, body) of a request with `key` as the bearer
    /// credential; every method but GET and HEAD sends `body` as JSON.
    pub async fn request_as(
        &self,
        key: Option<&str>,
        method: &str,
        path: &str,
        body: &str,
    ) -> Result<reqwest::Response> {
        let method = reqwest::Method::from_bytes(method.as_bytes())?;
        let mut request = self
            .client
            .request(method.clone(), format!("{}{path}", self.url));
        if let Some(key) = key {
            request = request.bearer_auth(key);
        }
        if method != reqwest::Method::GET && method != reqwest::Method::HEAD {
            request = request
                .header("content-type", "application/json")
                .body(body.to_string());
        }
        Ok(request.send().await?)
    }
}

impl Drop for AppHost {
    fn drop(&mut self) {
        self.kill_group();
    }
}

/// A response's status and body (JSON, or the text as a JSON string).
pub async fn decode(response: reqwest::Response) -> Result<(u16, Value)> {
    let status = response.status().as_u16();
    let text = response.text().await?;
    let json = serde_json::from_str(&text).unwrap_or(Value::String(text));
    Ok((status, json))
}

/// Runs `devhost --check` on a manifest: Ok(stdout) or Err(stderr). devhost only: it tests
/// devhost's own manifest handling.
pub async fn check(manifest: &Path) -> Result<std::result::Result<String, String>> {
    let output = Command::new(devhost_binary())
        .arg("--check")
        .arg("--manifest")
        .arg(manifest)
        .output()
        .await?;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    if !output.status.success() && stderr.is_empty() {
        bail!("devhost --check failed without a message");
    }
    Ok(if output.status.success() {
        Ok(stdout)
    } else {
        Err(stderr)
    })
}

/// Copies the host's stderr to the test's, line by line (so a failing test still shows
/// the host's logs), keeping each line for [`AppHost::stderr_lines`]. Ends when the host
/// closes it (exits).
fn pass_on_stderr(stderr: std::fs::File, kept: std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::BufRead;
    let mut reader = std::io::BufReader::new(stderr);
    let mut line = Vec::new();
    // Bytes, not `lines()`: a line that is not UTF-8 must not stop the draining.
    while reader.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
        let text = String::from_utf8_lossy(&line).trim_end().to_string();
        line.clear();
        eprintln!("{text}");
        if let Ok(mut kept) = kept.lock() {
            kept.push(text);
        }
    }
}
