//! What the visibility policy adds to a tool call (issue #48): the company graph of
//! tests/src/hr.rs served twice on one graph, by an application whose profile declares
//! the policy (tests/data/hr) and by one whose profile is the same without it, each called
//! as a viewer (the policy restricts a viewer most) with the same nine tool calls,
//! alternating so both see the same machine. Prints p50 and p99 per call on each and the
//! difference. Run: `cargo bench -p kg-e2e --bench visibility_cost` (after
//! scripts/setup.sh); on Spin and Neo4j with `KG_E2E_HOST=spin SPIN_BIN=…` and
//! `KG_E2E_GRAPH=neo4j`. `KG_BENCH_CALLS` sets the calls per tool and application (200).

use kg_e2e::{AppHost, Graph, auth, hr, manifest_with_catalog, workspace};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

fn calls() -> Vec<(&'static str, Value)> {
    vec![
        ("get_node_statistics", json!({"sample_size": 3})),
        ("search_instances", json!({"search_term": "Ada"})),
        (
            "get_instances_by_class",
            json!({"class_name": "Employee", "limit": 25}),
        ),
        ("get_instance_neighbors", json!({"instance": "E-01"})),
        (
            "get_instance_neighbors",
            json!({"instance": "E-06", "hops": 2}),
        ),
        (
            "find_path_between_instances",
            json!({"start": "E-01", "end": "E-03"}),
        ),
        ("describe_class", json!({"class_name": "Employee"})),
        ("get_ontology_relationships", json!({})),
        (
            "run_read_cypher",
            json!({"query": "MATCH (e:Employee)-[w:WORKS_IN]->(d) RETURN e, w, d.name"}),
        ),
    ]
}

/// The profile without its policy: every `properties` table, `visibility` line and
/// `[relationships.…]` table left out.
fn without_policy(text: &str) -> String {
    let mut out = String::new();
    let mut skipping = false;
    for line in text.lines() {
        if line.starts_with('[') {
            skipping = line.contains(".properties]") || line.starts_with("[relationships.");
        }
        if skipping || line.starts_with("visibility") {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

async fn call(host: &AppHost, tool: &str, arguments: &Value) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let (status, body) = host
        .send_as(
            Some(auth::VIEWER),
            "POST",
            &format!("/tools/{tool}"),
            &arguments.to_string(),
        )
        .await?;
    let took = started.elapsed();
    anyhow::ensure!(status == 200, "{tool} {arguments}: {status} {body}");
    Ok(took)
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1000.0
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let rounds: usize = std::env::var("KG_BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let graph = Graph::start_empty().await?;
    hr::load(&graph).await?;
    let dir = tempfile::tempdir()?;
    let open_catalog = dir.path().join("open-catalog");
    std::fs::create_dir_all(&open_catalog)?;
    let profile =
        std::fs::read_to_string(workspace().join(hr::CATALOG).join("graph-profile.toml"))?;
    std::fs::write(
        open_catalog.join("graph-profile.toml"),
        without_policy(&profile),
    )?;
    std::fs::copy(
        workspace().join(hr::CATALOG).join("actions.toml"),
        open_catalog.join("actions.toml"),
    )?;
    let with_dir = dir.path().join("with");
    let without_dir = dir.path().join("without");
    std::fs::create_dir_all(&with_dir)?;
    std::fs::create_dir_all(&without_dir)?;
    let variables = graph.variables();
    let with_policy = AppHost::start(
        &manifest_with_catalog(&with_dir, hr::CATALOG)?,
        &with_dir.join("kv.db"),
        &variables,
    )
    .await?;
    let without = AppHost::start(
        &manifest_with_catalog(&without_dir, &open_catalog)?,
        &without_dir.join("kv.db"),
        &variables,
    )
    .await?;
    // The policy is in force on one and not on the other.
    let (_, policy) = with_policy
        .get_as(Some(auth::ADMIN), "/graph/policy")
        .await?;
    anyhow::ensure!(policy["restricts"] == true, "{policy}");
    let (_, open) = without.get_as(Some(auth::ADMIN), "/graph/policy").await?;
    anyhow::ensure!(open["restricts"] == false, "{open}");

    let calls = calls();
    for (tool, arguments) in &calls {
        for host in [&with_policy, &without] {
            for _ in 0..10 {
                call(host, tool, arguments).await?;
            }
        }
    }
    let mut timed: Vec<(Vec<Duration>, Vec<Duration>)> = vec![Default::default(); calls.len()];
    for _ in 0..rounds {
        for (i, (tool, arguments)) in calls.iter().enumerate() {
            timed[i].0.push(call(&with_policy, tool, arguments).await?);
            timed[i].1.push(call(&without, tool, arguments).await?);
        }
    }
    println!(
        "visibility_cost: {rounds} calls per tool and application, as a viewer, on {:?} and {}",
        with_policy.kind,
        kg_e2e::GraphKind::from_env().name()
    );
    println!(
        "| call | without a policy p50 / p99 ms | with the policy p50 / p99 ms | added p50 / p99 ms |"
    );
    println!("|---|---|---|---|");
    let (mut all_with, mut all_without) = (Vec::new(), Vec::new());
    for ((tool, arguments), (with, without)) in calls.iter().zip(timed.iter_mut()) {
        with.sort();
        without.sort();
        all_with.extend(with.iter().copied());
        all_without.extend(without.iter().copied());
        println!(
            "| {tool} {arguments} | {:.2} / {:.2} | {:.2} / {:.2} | {:+.2} / {:+.2} |",
            percentile(without, 0.5),
            percentile(without, 0.99),
            percentile(with, 0.5),
            percentile(with, 0.99),
            percentile(with, 0.5) - percentile(without, 0.5),
            percentile(with, 0.99) - percentile(without, 0.99),
        );
    }
    all_with.sort();
    all_without.sort();
    println!(
        "| **all nine** | {:.2} / {:.2} | {:.2} / {:.2} | {:+.2} / {:+.2} |",
        percentile(&all_without, 0.5),
        percentile(&all_without, 0.99),
        percentile(&all_with, 0.5),
        percentile(&all_with, 0.99),
        percentile(&all_with, 0.5) - percentile(&all_without, 0.5),
        percentile(&all_with, 0.99) - percentile(&all_without, 0.99),
    );
    Ok(())
}
