//! An OCI registry on 127.0.0.1 for a test: Debian's `docker-registry` (the CNCF
//! Distribution registry), storing into a temporary folder, stopped when dropped.

use crate::process::free_port;
use anyhow::{Context, Result, bail};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use tokio::process::{Child, Command};

pub const REGISTRY_BINARY: &str = "/usr/bin/docker-registry";

pub struct OciRegistry {
    /// `127.0.0.1:PORT`, the host part of every reference into it.
    pub address: String,
    _server: Child,
    _storage: tempfile::TempDir,
}

impl OciRegistry {
    /// Whether Debian's registry is installed (scripts/test-deps.sh installs it).
    pub fn available() -> bool {
        Path::new(REGISTRY_BINARY).exists()
    }

    /// Starts one and waits until it accepts connections.
    pub async fn start() -> Result<OciRegistry> {
        let storage = tempfile::tempdir()?;
        let port = free_port()?;
        let config = storage.path().join("registry.yml");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: 127.0.0.1:{port}\n  secret: kg-e2e-registry\n",
                storage.path().join("storage").display()
            ),
        )?;
        // Its log (every 404 a client's lookup meets is an `error` line) goes to a file,
        // shown when it does not start.
        let log = storage.path().join("registry.log");
        let server = Command::new(REGISTRY_BINARY)
            .arg("serve")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log)?)
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("starting {REGISTRY_BINARY}"))?;
        let address = format!("127.0.0.1:{port}");
        for _ in 0..200 {
            if tokio::net::TcpStream::connect(&address).await.is_ok() {
                return Ok(OciRegistry {
                    address,
                    _server: server,
                    _storage: storage,
                });
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        bail!(
            "{REGISTRY_BINARY} did not listen on {address} within 10 s: {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        )
    }
}
