//! The key-value store named by a Spin runtime-config file: a Redis that is not there is
//! reported at start-up, naming the runtime-config entry, instead of failing requests
//! later.

use kg_e2e::{app_manifest, devhost_binary};
use std::time::Duration;
use tokio::process::Command;

fn runtime_config_with_redis_at(dir: &std::path::Path, url: &str) -> std::path::PathBuf {
    let path = dir.join("runtime-config.toml");
    std::fs::write(
        &path,
        format!("[key_value_store.default]\ntype = \"redis\"\nurl = \"{url}\"\n"),
    )
    .unwrap();
    path
}

#[tokio::test]
async fn devhost_refuses_to_start_when_the_runtime_config_redis_is_unreachable() {
    let dir = tempfile::tempdir().unwrap();
    // Port 9 (discard) on loopback: nothing listens, refused at once.
    let config = runtime_config_with_redis_at(dir.path(), "redis://127.0.0.1:9");
    let output = tokio::time::timeout(
        Duration::from_secs(60),
        Command::new(devhost_binary())
            .arg("--manifest")
            .arg(app_manifest())
            .arg("--listen")
            .arg("127.0.0.1:0")
            .arg("--runtime-config-file")
            .arg(&config)
            .output(),
    )
    .await
    .unwrap()
    .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("[key_value_store.default]") && stderr.contains("redis://127.0.0.1:9"),
        "{stderr}"
    );
}

#[tokio::test]
async fn devhost_refuses_runtime_config_it_does_not_implement_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("runtime-config.toml");
    std::fs::write(
        &config,
        "[[variables_provider]]\ntype = \"vault\"\nurl = \"http://127.0.0.1:9\"\ntoken = \"t\"\nmount = \"secret\"\n",
    )
    .unwrap();
    let output = Command::new(devhost_binary())
        .arg("--manifest")
        .arg(app_manifest())
        .arg("--check")
        .arg("--runtime-config-file")
        .arg(&config)
        .output()
        .await
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("`variables_provider`"), "{stderr}");
}
