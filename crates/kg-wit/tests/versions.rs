//! The WIT contracts' semver rule (docs/development.md#contracts): a package whose contract
//! changes gets a new version. wit/versions.lock records each package's version and a
//! digest of its contract (comments and layout left out, so rewording a doc comment is not
//! a change); this test fails when a contract changed and its version did not, and when
//! the lock is behind a version that did change. `KG_WIT_LOCK=update` rewrites the lock
//! after a bump (never over an unbumped change).

use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn wit_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../wit")
}

/// `package kg:router@0.1.0;` → (`kg:router`, `0.1.0`).
fn package(text: &str) -> (String, String) {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("package "))
        .expect("a WIT file declares its package");
    let id = line["package ".len()..].trim_end_matches(';').trim();
    let (name, version) = id.split_once('@').expect("a WIT package has a version");
    (name.to_string(), version.to_string())
}

/// The contract without comments and layout: what a consumer binds to.
fn digest(text: &str) -> String {
    let tokens: Vec<&str> = text
        .lines()
        .map(|l| l.split_once("//").map_or(l, |(code, _)| code))
        .flat_map(str::split_whitespace)
        .collect();
    let hash = Sha256::digest(tokens.join(" ").as_bytes());
    hash.iter().map(|b| format!("{b:02x}")).collect()
}

fn semver(v: &str) -> (u64, u64, u64) {
    let parts: Vec<u64> = v.split('.').map(|p| p.parse().unwrap_or(0)).collect();
    (
        parts.first().copied().unwrap_or(0),
        parts.get(1).copied().unwrap_or(0),
        parts.get(2).copied().unwrap_or(0),
    )
}

/// Every package of wit/ (worlds.wit and deps/*.wit): name → (file, version, digest).
fn packages() -> BTreeMap<String, (String, String, String)> {
    let dir = wit_dir();
    let mut files = vec![dir.join("worlds.wit")];
    let mut deps: Vec<PathBuf> = std::fs::read_dir(dir.join("deps"))
        .expect("wit/deps")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "wit"))
        .collect();
    deps.sort();
    files.extend(deps);
    files
        .iter()
        .map(|path| {
            let text = std::fs::read_to_string(path).expect("a WIT file reads");
            let (name, version) = package(&text);
            let file = path
                .strip_prefix(&dir)
                .expect("under wit/")
                .display()
                .to_string();
            (name, (file, version, digest(&text)))
        })
        .collect()
}

/// wit/versions.lock: `name version digest file` per line, `#` comments.
fn lock() -> BTreeMap<String, (String, String)> {
    let text = std::fs::read_to_string(wit_dir().join("versions.lock")).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let fields: Vec<&str> = l.split_whitespace().collect();
            assert!(fields.len() >= 3, "wit/versions.lock: bad line `{l}`");
            (
                fields[0].to_string(),
                (fields[1].to_string(), fields[2].to_string()),
            )
        })
        .collect()
}

fn write_lock(packages: &BTreeMap<String, (String, String, String)>) {
    let mut text = String::from(
        "# Each WIT package's version and the digest of its contract (comments and layout left\n\
         # out), checked by crates/kg-wit/tests/versions.rs. A changed contract needs a new\n\
         # version (docs/development.md#contracts); then KG_WIT_LOCK=update cargo test -p kg-wit.\n",
    );
    for (name, (file, version, digest)) in packages {
        text.push_str(&format!("{name} {version} {digest} {file}\n"));
    }
    std::fs::write(wit_dir().join("versions.lock"), text).expect("wit/versions.lock writes");
}

#[test]
fn a_changed_contract_has_a_new_version_and_the_lock_knows_it() {
    let packages = packages();
    let locked = lock();
    let mut unbumped = Vec::new();
    let mut behind = Vec::new();
    for (name, (file, version, digest)) in &packages {
        match locked.get(name) {
            Some((v, d)) if v == version && d != digest => unbumped.push(format!(
                "{name} (wit/{file}) changed but is still {version}: bump its version \
                 (a breaking change: the minor while 0.x, else the major)"
            )),
            Some((v, _)) if v != version => {
                assert!(
                    semver(version) > semver(v),
                    "{name} went from {v} to {version}: versions only go up"
                );
                behind.push(format!("{name} {v} → {version}"));
            }
            None => behind.push(format!("{name} (new)")),
            _ => {}
        }
    }
    assert!(unbumped.is_empty(), "{}", unbumped.join("\n"));
    let gone: Vec<&String> = locked
        .keys()
        .filter(|n| !packages.contains_key(*n))
        .collect();
    if behind.is_empty() && gone.is_empty() {
        return;
    }
    if std::env::var("KG_WIT_LOCK").as_deref() == Ok("update") {
        write_lock(&packages);
        return;
    }
    panic!(
        "wit/versions.lock is behind ({}; removed: {gone:?}): run KG_WIT_LOCK=update cargo test -p kg-wit --test versions",
        behind.join(", ")
    );
}

#[test]
fn the_digest_ignores_comments_and_layout_but_not_the_contract() {
    let a = "package kg:x@0.1.0;\n/// doc\ninterface i {\n  f: func(a: u32) -> u32; // why\n}\n";
    let b = "package kg:x@0.1.0;\n/// other words\ninterface i { f: func(a: u32) -> u32; }\n";
    let c = "package kg:x@0.1.0;\ninterface i { f: func(a: u64) -> u32; }\n";
    assert_eq!(digest(a), digest(b));
    assert_ne!(digest(a), digest(c));
    assert_eq!(package(a), ("kg:x".to_string(), "0.1.0".to_string()));
}
