//! The running app checked against its own OpenAPI document by a tester nobody here wrote:
//! schemathesis (PyPI, pinned in tests/schemathesis/requirements.txt) reads
//! `GET /openapi.json` from the app, generates requests for every operation (the examples,
//! the schema's boundaries, random valid and invalid data, and the stateful sequences the
//! document's links describe: plan → execute → undo), sends them with an admin's
//! credential and checks every answer: no 5xx, the status codes, content types, headers
//! and bodies the document promises, invalid data refused, valid data accepted, a deleted
//! resource gone, a request without its credential refused.
//!
//! The seed is fixed (`KG_SCHEMATHESIS_SEED` to change it), so CI runs the same cases each
//! time; `KG_SCHEMATHESIS_EXAMPLES` sets the cases per operation and phase.

use kg_e2e::auth::ADMIN;
use kg_e2e::{Stack, answering_stub, devgraph_only, python};
use serde_json::Value;
use std::time::Instant;

const DEFAULT_SEED: &str = "20261128";
const DEFAULT_EXAMPLES: &str = "25";
/// Operations tests/schemathesis/schemathesis.toml switches off (`callTool`).
const DISABLED_OPERATIONS: usize = 1;

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name)
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| default.to_string())
}

#[tokio::test]
async fn schemathesis_finds_no_failure_in_any_operation() {
    // ~2,800 requests: on devhost + devgraph (pass 1) as the issue asks; on Spin + Neo4j
    // the same run would add minutes to CI for what the other suites there already cover.
    if devgraph_only("schemathesis runs on devgraph (pass 1), to keep CI's time") {
        return;
    }
    let stub = answering_stub::start().await;
    let mut variables = answering_stub::variables(&stub);
    variables.push(("embedding_model", "stub-embedding".to_string()));
    let stack = Stack::start_with(&variables).await.unwrap();
    let (host, dir) = (&stack.host, &stack.dir);

    let python = python::venv("schemathesis").await.unwrap();
    let report = dir.path().join("report");
    let seed = env_or("KG_SCHEMATHESIS_SEED", DEFAULT_SEED);
    let examples = env_or("KG_SCHEMATHESIS_EXAMPLES", DEFAULT_EXAMPLES);
    let started = Instant::now();
    let output = tokio::process::Command::new(python.with_file_name("schemathesis"))
        .current_dir(dir.path())
        .arg("--config-file")
        .arg(kg_e2e::workspace().join("tests/schemathesis/schemathesis.toml"))
        .args(["run", &format!("{}/openapi.json", host.url)])
        .args(["--header", &format!("Authorization: Bearer {ADMIN}")])
        .args(["--phases", "examples,coverage,fuzzing,stateful"])
        .args(["--max-examples", &examples, "--seed", &seed])
        // One worker: with two, schemathesis's threads build Hypothesis strategies at once,
        // and CPython 3.11's `ast.parse` (Hypothesis describes filter lambdas by parsing
        // their source) keeps its recursion depth in interpreter-wide state, so two threads
        // parsing together can fail with "SystemError: AST constructor recursion depth
        // mismatch" (python/cpython#106905): a crash of the tester that failed CI on
        // 28 Nov, not a finding about the app. One worker also makes the seeded run
        // send its cases in one order.
        .args(["--workers", "1", "--request-timeout", "60"])
        .args(["--report", "ndjson,junit"])
        .arg("--report-dir")
        .arg(&report)
        .args(["--output-truncate", "false", "--no-color"])
        .output()
        .await
        .unwrap();
    let elapsed = started.elapsed();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    println!("{stdout}");
    eprintln!("{stderr}");
    let summary = summary_line(&stdout);
    println!(
        "schemathesis: seed {seed}, {examples} examples per operation: {summary} in {:.1} s",
        elapsed.as_secs_f64()
    );
    assert!(
        output.status.success(),
        "schemathesis failed ({}); its report is above and in {}",
        output.status,
        report.display()
    );
    let (tested, selected, total) = operations(&report);
    println!("schemathesis: {tested} operations tested of {selected} selected, {total} loaded");
    // Every operation it loaded was tested, but those the config switches off.
    assert_eq!(selected + DISABLED_OPERATIONS, total, "{report:?}");
    assert_eq!(tested, selected, "{report:?}");
}

/// The run's count of cases (`123 generated, 1 found 1 unique failure, 4 skipped`).
fn summary_line(stdout: &str) -> String {
    stdout
        .lines()
        .rev()
        .find(|line| line.contains(" generated"))
        .unwrap_or("no summary")
        .trim()
        .to_string()
}

/// From the ndjson event log: how many operations were tested (a scenario of theirs ran,
/// not skipped, by their labels: `POST /tools/{name}`), selected and loaded.
fn operations(report: &std::path::Path) -> (usize, usize, usize) {
    let mut labels = std::collections::BTreeSet::new();
    let (mut selected, mut total) = (0, 0);
    for entry in std::fs::read_dir(report).into_iter().flatten().flatten() {
        if !entry.path().extension().is_some_and(|x| x == "ndjson") {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        for event in text
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        {
            let loaded = &event["LoadingFinished"]["statistic"]["operations"];
            if let (Some(s), Some(t)) = (loaded["selected"].as_u64(), loaded["total"].as_u64()) {
                (selected, total) = (s, t);
            }
            let finished = &event["ScenarioFinished"];
            if finished["status"] != "skip"
                && finished["phase"] != "stateful"
                && let Some(label) = finished["recorder"]["label"].as_str()
            {
                labels.insert(label.to_string());
            }
        }
    }
    (labels.len(), selected as usize, total as usize)
}
