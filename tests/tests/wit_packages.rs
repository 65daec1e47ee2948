//! The WIT contracts as packages (issue #38 item 1): every package of `wit/` published with
//! wkg (the ecosystem's tool, tools/wkg/install.sh) to an OCI registry (Debian's
//! `docker-registry` on 127.0.0.1), then fetched back by a consumer build with the same tool:
//! the query-tools extension of examples/query-tools-extension/ built by `build.sh registry`,
//! whose `wkg wit fetch` finds `kg:query-tools` and `kg:types` in the registry through the
//! `kg` namespace's mapping, exactly as a team outside this repository would configure it.
//!
//! Host-independent (no application is served), so it runs in pass 1 (devhost) only.

use kg_e2e::oci_registry::{OciRegistry, REGISTRY_BINARY};
use kg_e2e::process::path_printed_by;
use kg_e2e::{HostKind, workspace};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Instant;
use tokio::process::Command;

/// The packages, each with its file in wit/, dependencies first (wkg builds a package
/// against the ones already in the registry).
const PACKAGES: [(&str, &str); 7] = [
    ("kg:types", "deps/types.wit"),
    ("kg:router", "deps/router.wit"),
    ("kg:query-tools", "deps/query-tools.wit"),
    ("kg:action-executor", "deps/action-executor.wit"),
    ("kg:retriever", "deps/retriever.wit"),
    ("kg:summariser", "deps/summariser.wit"),
    ("kg:agent", "worlds.wit"),
];

/// The version a package file under `wit/` declares (`package kg:x@0.1.1;`).
fn package_version(file: &str) -> String {
    let text = std::fs::read_to_string(workspace().join("wit").join(file)).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("package "))
        .unwrap_or_else(|| panic!("{file} declares no package"));
    line.trim_end_matches(';')
        .rsplit('@')
        .next()
        .unwrap_or_default()
        .to_string()
}

/// Runs a command; its output, or a panic showing what it printed.
async fn run(command: &mut Command, what: &str) -> Output {
    let output = command
        .output()
        .await
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// wkg's configuration for a team that takes kg-agent's contracts from `registry`: the
/// `kg` namespace mapped to it, over plain HTTP (a local registry has no TLS).
fn wkg_config(registry: &str) -> String {
    format!(
        "[namespace_registries]\nkg = \"{registry}\"\n\n[registry.\"{registry}\"]\ntype = \"oci\"\n\n[registry.\"{registry}\".oci]\nprotocol = \"http\"\n"
    )
}

/// wkg with this test's configuration and a cache of its own (nothing read from or
/// written to the user's).
struct Wkg {
    binary: PathBuf,
    config: PathBuf,
    cache: PathBuf,
}

impl Wkg {
    fn command(&self) -> Command {
        let mut command = Command::new(&self.binary);
        command
            .env("WKG_CONFIG_FILE", &self.config)
            .env("WKG_CACHE_DIR", &self.cache);
        command
    }

    /// The WIT package of `source` (one package's file), built by `wkg wit build` in
    /// `folder` (the file copied to its `wit/`): `folder/package.wasm`.
    async fn build_package(&self, folder: &Path, source: &Path) -> PathBuf {
        let wit = folder.join("wit");
        std::fs::create_dir_all(&wit).unwrap();
        std::fs::copy(source, wit.join("package.wit")).unwrap();
        let package = folder.join("package.wasm");
        run(
            self.command()
                .current_dir(folder)
                .args(["wit", "build", "--output"])
                .arg(&package),
            &format!("wkg wit build of {}", source.display()),
        )
        .await;
        package
    }
}

#[tokio::test]
async fn the_contracts_published_to_an_oci_registry_are_fetched_back_by_a_consumer_build() {
    if HostKind::from_env() != HostKind::Devhost {
        eprintln!("wit_packages: not run on this pass (it serves no application: pass 1 runs it)");
        return;
    }
    assert!(
        OciRegistry::available(),
        "{REGISTRY_BINARY} is missing: apt-get install docker-registry (scripts/test-deps.sh)"
    );
    let started = Instant::now();
    let binary = path_printed_by(
        Command::new("bash").arg(workspace().join("tools/wkg/install.sh")),
        "tools/wkg/install.sh",
    )
    .await
    .unwrap();
    eprintln!(
        "wit_packages: wkg at {} after {:.1?}",
        binary.display(),
        started.elapsed()
    );

    let registry = OciRegistry::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    // Not `wkg.toml`: wkg reads a file of that name in its folder as a project manifest.
    let config = dir.path().join("wkg-config.toml");
    std::fs::write(&config, wkg_config(&registry.address)).unwrap();
    let wkg = Wkg {
        binary,
        config,
        cache: dir.path().join("cache"),
    };

    // Publish: each package built from a folder holding only its file (`wkg wit build`
    // resolves its `kg:` dependencies from the registry and pins them in the folder's
    // wkg.lock), then `wkg publish` of the built package.
    let published = Instant::now();
    for (name, file) in PACKAGES {
        let folder = dir.path().join("packages").join(name.replace(':', "-"));
        let package = wkg
            .build_package(&folder, &workspace().join("wit").join(file))
            .await;
        let output = run(
            wkg.command()
                .current_dir(&folder)
                .arg("publish")
                .arg(&package),
            &format!("wkg publish {name}"),
        )
        .await;
        eprintln!(
            "wit_packages: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    eprintln!(
        "wit_packages: {} packages published in {:.1?}",
        PACKAGES.len(),
        published.elapsed()
    );

    // The registry keeps a published version as it is, and wkg checks a new one against
    // it: the same version again is refused, and so is a 0.1.2 of kg:agent that drops a
    // world of 0.1.1, which the semver rule (docs/development.md#contracts) says needs
    // 0.2.0. (wkg checks worlds only, so a package of interfaces alone, such as kg:types,
    // is not checked by it: crates/kg-wit/tests/versions.rs is the gate for those.)
    let types = dir.path().join("packages/kg-types");
    let again = wkg
        .command()
        .current_dir(&types)
        .arg("publish")
        .arg(types.join("package.wasm"))
        .output()
        .await
        .unwrap();
    let said = String::from_utf8_lossy(&again.stderr);
    assert!(
        !again.status.success(),
        "published kg:types@0.1.0 twice: {said}"
    );
    assert!(said.contains("already exists"), "{said}");
    let contract = std::fs::read_to_string(workspace().join("wit/worlds.wit")).unwrap();
    let dropped = "world summariser-component {\n    export kg:summariser/summariser@0.1.0;\n}\n";
    let broken = contract
        .replace("package kg:agent@0.1.1;", "package kg:agent@0.1.2;")
        .replace(dropped, "");
    assert!(
        broken.contains("@0.1.2;") && !broken.contains("world summariser-component"),
        "the edit applied: {broken}"
    );
    let breaking = dir.path().join("packages/kg-agent-breaking");
    let source = dir.path().join("worlds-0.1.2.wit");
    std::fs::write(&source, broken).unwrap();
    let package = wkg.build_package(&breaking, &source).await;
    let refused = wkg
        .command()
        .current_dir(&breaking)
        .arg("publish")
        .arg(&package)
        .output()
        .await
        .unwrap();
    let said = String::from_utf8_lossy(&refused.stderr);
    eprintln!("wit_packages: a breaking kg:agent@0.1.2: {}", said.trim());
    assert!(
        !refused.status.success(),
        "a breaking 0.1.2 was published: {said}"
    );
    assert!(said.contains("summariser-component"), "{said}");

    // The registry holds each one under its version (the OCI tag).
    let client = reqwest::Client::new();
    for (name, file) in PACKAGES {
        let version = package_version(file);
        let repository = name.replace(':', "/");
        let tags: serde_json::Value = client
            .get(format!(
                "http://{}/v2/{repository}/tags/list",
                registry.address
            ))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(tags["tags"], serde_json::json!([version]), "{name}: {tags}");
    }

    // A package fetched back is the contract in wit/: the same package, version and
    // interface, read through wkg.
    let query_tools = format!("kg:query-tools@{}", package_version("deps/query-tools.wit"));
    let fetched = dir.path().join("query-tools.wasm");
    run(
        wkg.command()
            .arg("get")
            .arg(&query_tools)
            .arg("--output")
            .arg(&fetched),
        &format!("wkg get {query_tools}"),
    )
    .await;
    let bytes = std::fs::read(&fetched).unwrap();
    assert_eq!(&bytes[..4], b"\0asm", "a WIT package is Wasm");

    // The consumer build: the extension against the contracts wkg fetches.
    let built = Instant::now();
    let component = path_printed_by(
        Command::new("bash")
            .arg(workspace().join("examples/query-tools-extension/build.sh"))
            .arg("registry")
            .env("WKG", &wkg.binary)
            .env("WKG_CONFIG_FILE", &wkg.config)
            .env("WKG_CACHE_DIR", dir.path().join("consumer-cache")),
        "examples/query-tools-extension/build.sh registry",
    )
    .await
    .unwrap();
    let size = std::fs::metadata(&component).unwrap().len();
    eprintln!(
        "wit_packages: the consumer build made {} ({size} bytes) in {:.1?}",
        component.display(),
        built.elapsed()
    );
    let deps = component
        .parent()
        .unwrap()
        .join("registry")
        .join("wit")
        .join("deps");
    let fetched: Vec<String> = std::fs::read_dir(&deps)
        .unwrap_or_else(|e| panic!("{}: {e}", deps.display()))
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        fetched.iter().any(|f| f.contains("query-tools"))
            && fetched.iter().any(|f| f.contains("types")),
        "wkg wit fetch wrote {fetched:?}"
    );
    // And the contracts it fetched are ours: the component is the one built against
    // wit/deps/ directly, byte for byte (the WIT is embedded in it).
    let local = path_printed_by(
        Command::new("bash")
            .arg(workspace().join("examples/query-tools-extension/build.sh"))
            .arg("local"),
        "examples/query-tools-extension/build.sh local",
    )
    .await
    .unwrap();
    assert!(
        std::fs::read(local).unwrap() == std::fs::read(&component).unwrap(),
        "the component built against the registry's contracts differs from the one built against wit/deps/"
    );
    eprintln!("wit_packages: done in {:.1?}", started.elapsed());
}
