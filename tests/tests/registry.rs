//! The SpinKube path on one machine: `spin registry push` of the served app to an OCI
//! registry (Debian's `docker-registry`, the CNCF Distribution registry) on 127.0.0.1,
//! then `spin up --from <reference>` serving it. Needs a Spin binary and the registry;
//! without either it says SKIPPED loudly and passes (the README's test command prints
//! which passes ran).

use kg_e2e::oci_registry::{OciRegistry, REGISTRY_BINARY};
use kg_e2e::process::listening_url;
use kg_e2e::{Graph, app_manifest, auth, spin_binary};
use std::process::Stdio;
use tokio::process::Command;

#[tokio::test]
async fn the_app_pushed_to_an_oci_registry_runs_with_spin_up_from_the_reference() {
    let Some(spin) = spin_binary() else {
        eprintln!("SKIPPED: no spin binary: spin registry push / spin up --from not tested");
        return;
    };
    if !OciRegistry::available() {
        eprintln!("SKIPPED: no {REGISTRY_BINARY} (apt-get install docker-registry)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let oci = OciRegistry::start().await.unwrap();
    let registry = &oci.address;

    let reference = format!("{registry}/kg-agent:e2e");
    let pushed = Command::new(&spin)
        .args(["registry", "push", "--insecure", "--from"])
        .arg(app_manifest())
        .arg(&reference)
        .output()
        .await
        .unwrap();
    assert!(
        pushed.status.success(),
        "spin registry push failed: {}{}",
        String::from_utf8_lossy(&pushed.stdout),
        String::from_utf8_lossy(&pushed.stderr)
    );

    let graph = Graph::start().await.unwrap();
    let mut command = Command::new(&spin);
    command
        .args([
            "up",
            "--insecure",
            "--from",
            &reference,
            "--listen",
            "127.0.0.1:0",
        ])
        .arg("--cache-dir")
        .arg(dir.path().join("cache"))
        .arg("--log-dir")
        .arg(dir.path().join("logs"))
        .arg("--runtime-config-file")
        .arg({
            let path = dir.path().join("runtime-config.toml");
            std::fs::write(
                &path,
                format!(
                    "[key_value_store.default]\ntype = \"spin\"\npath = \"{}\"\n",
                    dir.path().join("kv.db").display()
                ),
            )
            .unwrap();
            path
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        // `spin up` runs the trigger as a child: kill the whole group at the end.
        .process_group(0)
        .kill_on_drop(true);
    for (name, value) in graph.variables() {
        command.arg("--variable").arg(format!("{name}={value}"));
    }
    command
        .arg("--variable")
        .arg(format!("auth_api_keys={}", auth::all_test_keys()));
    let mut app = command.spawn().unwrap();
    let url = listening_url(&mut app, "spin up --from the registry", "Serving ")
        .await
        .unwrap();

    let response = reqwest::Client::new()
        .get(format!("{url}/health"))
        .bearer_auth(auth::ADMIN)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let health: serde_json::Value = response.json().await.unwrap();
    assert_eq!(status, 200, "{health}");
    assert_eq!(health["status"], "ok");
    // The catalog travelled with the app (the files mount is part of the artefact).
    assert!(
        health.to_string().contains("from /catalog/actions.toml"),
        "{health}"
    );
    if let Some(pid) = app.id().and_then(|p| i32::try_from(p).ok()) {
        // SAFETY: signals the process group created for `spin up` above.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    app.kill().await.unwrap();
}
