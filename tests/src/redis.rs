//! A private Redis server (Debian's `redis-server`) for tests of instances that share
//! state: started on a free port with no persistence, stopped on drop.

use crate::process::free_port;
use anyhow::{Context, Result, bail};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

pub struct RedisServer {
    pub url: String,
    child: Child,
}

/// `REDIS_SERVER_BIN`, else `redis-server` on PATH.
pub fn redis_binary() -> String {
    std::env::var("REDIS_SERVER_BIN").unwrap_or_else(|_| "redis-server".to_string())
}

impl RedisServer {
    pub async fn start() -> Result<RedisServer> {
        let port = free_port()?;
        let mut child = Command::new(redis_binary())
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--loglevel", "notice"])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| {
                format!(
                    "starting {} (scripts/setup.sh installs Debian's redis-server)",
                    redis_binary()
                )
            })?;
        let stdout = child.stdout.take().context("redis stdout")?;
        let mut lines = BufReader::new(stdout).lines();
        tokio::time::timeout(Duration::from_secs(30), async {
            while let Some(line) = lines.next_line().await? {
                if line.contains("Ready to accept connections") {
                    return Ok(());
                }
            }
            bail!("redis-server exited before it was ready")
        })
        .await
        .context("redis-server did not start within 30 s")??;
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Ok(RedisServer {
            url: format!("redis://127.0.0.1:{port}"),
            child,
        })
    }

    pub async fn stop(mut self) -> Result<()> {
        self.child.kill().await?;
        Ok(())
    }
}
