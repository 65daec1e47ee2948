//! devhost refuses applications Spin would refuse, with a message naming the problem.

use kg_e2e::{check, workspace};
use std::path::{Path, PathBuf};

/// devhost's own checks always start from the project's manifest, whatever this run serves.
fn manifest_variant(dir: &Path, edit: impl FnOnce(String) -> String) -> anyhow::Result<PathBuf> {
    kg_e2e::manifest_variant_of(&workspace().join("spin.toml"), dir, edit)
}

#[tokio::test]
async fn the_project_manifest_loads() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = manifest_variant(dir.path(), |m| m).unwrap();
    let out = check(&manifest)
        .await
        .unwrap()
        .expect("spin.toml should load");
    assert!(out.contains("loads, composes and links"), "{out}");
}

#[tokio::test]
async fn an_import_nobody_provides_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    // Drop the summariser dependency: the dispatcher's import of it is left unsatisfied.
    let manifest = manifest_variant(dir.path(), |m| {
        m.lines()
            .filter(|l| !l.starts_with("\"kg:summariser/summariser@0.1.0\""))
            .collect::<Vec<_>>()
            .join("\n")
    })
    .unwrap();
    let err = check(&manifest)
        .await
        .unwrap()
        .expect_err("must be refused");
    assert!(err.contains("kg:summariser/summariser@0.1.0"), "{err}");
    assert!(err.contains("devhost does not provide"), "{err}");
}

#[tokio::test]
async fn a_dependency_matching_no_import_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = manifest_variant(dir.path(), |m| {
        m.replace("\"kg:router/router@0.1.0\"", "\"kg:router/rooter@0.1.0\"")
    })
    .unwrap();
    let err = check(&manifest)
        .await
        .unwrap()
        .expect_err("must be refused");
    assert!(err.contains("kg:router/rooter@0.1.0"), "{err}");
    assert!(err.contains("doesn't match any import"), "{err}");
}

#[tokio::test]
async fn a_missing_wasm_file_names_the_build_command() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = manifest_variant(dir.path(), |m| {
        m.replace("kg_router.wasm", "kg_nothing.wasm")
    })
    .unwrap();
    let err = check(&manifest)
        .await
        .unwrap()
        .expect_err("must be refused");
    assert!(err.contains("kg_nothing.wasm"), "{err}");
    assert!(err.contains("cargo build --target wasm32-wasip2"), "{err}");
}
