//! devhost's instance pool under more requests than it has slots: every request waits
//! for a slot and is answered, and no handler fails once its response is set (the pool's
//! fiber stacks must cover what a request holds at once, not one per instance). devhost
//! only, on a pool of two instances so that a run of 200 requests reaches its limits.

use kg_e2e::{AppHost, Graph, KeyValue, app_manifest};
use std::time::Duration;

const POOL: &str = "2";
const REQUESTS: usize = 200;

/// What devhost prints when a component fails after setting its response, or when the pool
/// runs out of something; neither may appear.
const LATE_FAILURES: [&str; 2] = [
    "failed after setting its response",
    "maximum concurrent limit",
];

async fn small_pool_host(graph: &Graph, dir: &tempfile::TempDir) -> AppHost {
    AppHost::start_devhost_with_flags(
        &app_manifest(),
        &KeyValue::File(dir.path().join("kv.db")),
        &graph.variables(),
        &["--instance-allocator", "pooling", "--pool-instances", POOL],
    )
    .await
    .expect("starting devhost with a pool of two instances")
}

/// The requests sent all at once: each one's status, 0 for one that got no answer.
async fn statuses_of(
    requests: impl Iterator<Item = impl Future<Output = anyhow::Result<(u16, serde_json::Value)>>>,
) -> Vec<u16> {
    futures::future::join_all(requests)
        .await
        .into_iter()
        .map(|result| result.map(|(status, _)| status).unwrap_or(0))
        .collect()
}

/// The late failures devhost logged, once the handlers behind the answers have had time
/// to end.
async fn late_failures(host: &AppHost) -> Vec<String> {
    // A handler runs on after its response is read; let the last ones end.
    tokio::time::sleep(Duration::from_millis(300)).await;
    host.stderr_lines()
        .into_iter()
        .filter(|line| LATE_FAILURES.iter().any(|failure| line.contains(failure)))
        .collect()
}

fn assert_all_ok(statuses: &[u16], late: &[String]) {
    let failed: Vec<&u16> = statuses.iter().filter(|s| **s != 200).collect();
    assert!(
        failed.is_empty(),
        "{} of {REQUESTS} requests failed, e.g. {:?}",
        failed.len(),
        failed.first()
    );
    assert!(
        late.is_empty(),
        "{} late failures, e.g. {:?}",
        late.len(),
        late.first()
    );
}

#[tokio::test]
async fn two_hundred_concurrent_health_checks_on_two_slots_all_answer_and_none_fails_late() {
    let graph = Graph::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let host = small_pool_host(&graph, &dir).await;
    let statuses = statuses_of((0..REQUESTS).map(|_| host.get("/health"))).await;
    assert_all_ok(&statuses, &late_failures(&host).await);
}

#[tokio::test]
async fn two_hundred_concurrent_tool_calls_on_two_slots_all_answer_and_none_fails_late() {
    let graph = Graph::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let host = small_pool_host(&graph, &dir).await;
    let calls = (0..REQUESTS).map(|_| {
        host.send(
            "POST",
            "/tools/get_node_statistics",
            r#"{"label": "PurchaseOrder"}"#,
        )
    });
    let statuses = statuses_of(calls).await;
    assert_all_ok(&statuses, &late_failures(&host).await);
}
