//! `/health` through the application's host over real HTTP: every dependency reached over WIT, the graph
//! queried through the outbound allow-list, the KV store round-tripped and persisted.

use kg_e2e::capacity;
use kg_e2e::{
    AppHost, GRAPH_PASSWORD, Graph, HostKind, Stack, app_manifest, manifest_is_composed,
    manifest_variant, recording_server,
};
use serde_json::Value;

const COMPONENTS: [&str; 5] = [
    "router",
    "query-tools",
    "action-executor",
    "retriever",
    "summariser",
];

fn component<'a>(health: &'a Value, name: &str) -> &'a Value {
    health["components"]
        .as_array()
        .and_then(|all| all.iter().find(|c| c["name"] == name))
        .unwrap_or_else(|| panic!("no component {name} in {health}"))
}

fn check<'a>(component: &'a Value, name: &str) -> &'a Value {
    component["checks"]
        .as_array()
        .and_then(|all| all.iter().find(|c| c["name"] == name))
        .unwrap_or_else(|| panic!("no check {name} in {component}"))
}

fn graph_at(origin: &str) -> Vec<(&'static str, String)> {
    vec![
        ("neo4j_origin", origin.to_string()),
        ("neo4j_password", GRAPH_PASSWORD.to_string()),
    ]
}

#[tokio::test]
async fn health_reaches_all_five_components_the_graph_and_the_kv_store() {
    let stack = Stack::start().await.unwrap();
    let host = &stack.host;

    let (status, health) = host.get("/health").await.unwrap();
    assert_eq!(status, 200, "{health}");
    assert_eq!(health["status"], "ok");
    assert_eq!(health["version"], "0.1.0");
    for name in COMPONENTS {
        let c = component(&health, name);
        assert_eq!(c["ready"], true, "{c}");
        assert_eq!(c["version"], "0.1.0");
        assert_eq!(check(c, "configuration")["ok"], true, "{c}");
    }
    let graph_check = check(component(&health, "query-tools"), "graph");
    assert_eq!(graph_check["ok"], true, "{graph_check}");
    assert!(
        graph_check["detail"]
            .as_str()
            .unwrap()
            .contains("answered a READ query"),
        "{graph_check}"
    );
    assert_eq!(health["kv"]["ok"], true, "{health}");
    assert_eq!(health["kv"]["store"], "default");
    assert_eq!(health["kv"]["probes"], 1);
}

#[tokio::test]
async fn graph_down_makes_health_503_with_the_reason() {
    // Port 9 (discard) on loopback: nothing listens, the connection is refused at once.
    let dir = tempfile::tempdir().unwrap();
    let host = AppHost::start(
        &app_manifest(),
        &dir.path().join("kv.db"),
        &graph_at("http://127.0.0.1:9"),
    )
    .await
    .unwrap();
    let (status, health) = host.get("/health").await.unwrap();
    assert_eq!(status, 503, "{health}");
    assert_eq!(health["status"], "degraded");
    let graph = check(component(&health, "query-tools"), "graph");
    assert_eq!(graph["ok"], false);
    assert!(
        graph["detail"].as_str().unwrap().contains("unreachable"),
        "{graph}"
    );
    assert!(
        health["problems"][0]
            .as_str()
            .unwrap()
            .starts_with("query-tools not ready"),
        "{health}"
    );
}

#[tokio::test]
async fn a_base_path_that_is_not_one_is_named_in_health() {
    // The origins are checked by the host too (they are allowed_outbound_hosts entries:
    // a bad one stops the app from starting); the path is the app's alone to check.
    let dir = tempfile::tempdir().unwrap();
    let mut vars = graph_at("http://127.0.0.1:9");
    vars.push(("llm_base_path", "v1".to_string()));
    let host = AppHost::start(&app_manifest(), &dir.path().join("kv.db"), &vars)
        .await
        .unwrap();
    let (status, health) = host.get("/health").await.unwrap();
    assert_eq!(status, 503, "{health}");
    for name in ["router", "summariser"] {
        let llm = check(component(&health, name), "llm_configuration");
        assert_eq!(llm["ok"], false, "{llm}");
        assert!(
            llm["detail"].as_str().unwrap().contains(
                "variable `llm_base_path`: `v1` does not start with `/`; expected the API's path on llm_origin, e.g. /v1"
            ),
            "{llm}"
        );
    }
}

#[tokio::test]
async fn wrong_graph_credentials_make_health_503() {
    let graph = Graph::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let vars = vec![
        ("neo4j_origin", graph.url.clone()),
        ("neo4j_password", "wrong".to_string()),
    ];
    let host = AppHost::start(&app_manifest(), &dir.path().join("kv.db"), &vars)
        .await
        .unwrap();
    let (status, health) = host.get("/health").await.unwrap();
    assert_eq!(status, 503, "{health}");
    let detail = check(component(&health, "query-tools"), "graph")["detail"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(detail.contains("Unauthorized"), "{detail}");
}

#[tokio::test]
async fn a_host_missing_from_allowed_outbound_hosts_is_never_contacted() {
    let recorder = recording_server().await;
    let dir = tempfile::tempdir().unwrap();
    // Same application, but the dispatcher (whose list query-tools inherits) allows every
    // origin but the graph's.
    let manifest = manifest_variant(dir.path(), |m| {
        let edited = m.replace(
            r#"allowed_outbound_hosts = ["{{ neo4j_origin }}", "#,
            r#"allowed_outbound_hosts = ["#,
        );
        assert_ne!(
            edited, m,
            "the manifest's allow-list starts with the graph's origin"
        );
        edited
    })
    .unwrap();
    let host = AppHost::start(
        &manifest,
        &dir.path().join("kv.db"),
        &graph_at(&recorder.uri()),
    )
    .await
    .unwrap();
    let (status, health) = host.get("/health").await.unwrap();
    assert_eq!(status, 503, "{health}");
    let graph = check(component(&health, "query-tools"), "graph");
    assert_eq!(graph["ok"], false);
    assert!(
        graph["detail"]
            .as_str()
            .unwrap()
            .contains("allowed_outbound_hosts"),
        "{graph}"
    );
    assert!(recorder.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn a_dependency_that_does_not_inherit_outbound_hosts_cannot_send_requests() {
    if manifest_is_composed() {
        eprintln!("SKIPPED: the served manifest is pre-composed (no dependencies to grant)");
        return;
    }
    let recorder = recording_server().await;
    let dir = tempfile::tempdir().unwrap();
    // Spin 4's per-dependency grants (exclusive with the component-wide switch): the three
    // dependencies that talk to the graph get variables only; router and summariser (whose
    // health checks send nothing) get everything.
    let manifest = manifest_variant(dir.path(), |m| {
        let mut m = m
            .replace("dependencies_inherit_configuration = true\n", "")
            .replace(".wasm\" }", ".wasm\", inherit_configuration = true }");
        for graph_user in ["kg_query_tools", "kg_action_executor", "kg_retriever"] {
            m = m.replace(
                &format!(r#"{graph_user}.wasm", inherit_configuration = true }}"#),
                &format!(r#"{graph_user}.wasm", inherit_configuration = ["variables"] }}"#),
            );
        }
        m
    })
    .unwrap();
    let host = AppHost::start(
        &manifest,
        &dir.path().join("kv.db"),
        &graph_at(&recorder.uri()),
    )
    .await
    .unwrap();
    let (status, health) = host.get("/health").await.unwrap();
    match host.kind {
        // devhost's deny adapter traps the call: the request fails as a whole.
        HostKind::Devhost => assert_eq!(status, 500),
        // Spin's returns an error value, which each component reports.
        HostKind::Spin => {
            assert_eq!(status, 503, "{health}");
            for name in ["query-tools", "action-executor", "retriever"] {
                let graph = check(component(&health, name), "graph");
                assert_eq!(graph["ok"], false, "{graph}");
                assert!(
                    graph["detail"]
                        .to_string()
                        .contains("allowed_outbound_hosts"),
                    "{graph}"
                );
                // Variables were granted: the configuration still resolves.
                assert_eq!(check(component(&health, name), "configuration")["ok"], true);
            }
        }
    }
    // Either way nothing reaches the network.
    assert!(recorder.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn the_kv_store_persists_across_requests_and_restarts() {
    let graph = Graph::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kv = dir.path().join("kv.db");
    let vars = graph.variables();

    let host = AppHost::start(&app_manifest(), &kv, &vars).await.unwrap();
    let (_, first) = host.get("/health").await.unwrap();
    let (_, second) = host.get("/health").await.unwrap();
    assert_eq!(first["kv"]["probes"], 1);
    assert_eq!(first["kv"]["previous_probe_at_unix_ms"], Value::Null);
    assert_eq!(second["kv"]["probes"], 2);
    host.stop().await.unwrap();

    let host = AppHost::start(&app_manifest(), &kv, &vars).await.unwrap();
    let (_, third) = host.get("/health").await.unwrap();
    assert_eq!(third["kv"]["probes"], 3, "{third}");
    assert!(third["kv"]["previous_probe_at_unix_ms"].as_u64().is_some());
}

/// Every check round-trips the store under a key of its own (and deletes it), so checks
/// running at once never read each other's values: 200 concurrent checks, each healthy.
/// On Spin, as many as its default instance pool holds (tests/src/capacity.rs): the rest
/// are Spin's own prompt refusals, asserted as such.
#[tokio::test]
async fn two_hundred_concurrent_health_checks_answer_up_to_the_pool() {
    let stack = Stack::start().await.unwrap();
    let host = &stack.host;
    let footprint = capacity::footprint(&app_manifest(), "dispatcher").unwrap();
    let check = capacity::Request {
        method: "GET",
        path: "/health".into(),
        body: String::new(),
        authenticated: true,
    };
    let burst = capacity::burst(host, &check, 200, std::time::Duration::from_secs(60)).await;
    // An unhealthy answer (503) says why: its problems.
    for outcome in &burst.outcomes {
        if let capacity::Outcome::Answered { status: 503, body } = outcome {
            panic!("a concurrent check found a problem: {body}");
        }
    }
    capacity::check(host, &footprint, "GET /health", &burst).unwrap();
    // The probe record survives (its count is approximate under concurrency: last
    // writer wins), and a later check still reads it.
    let (status, health) = host.get("/health").await.unwrap();
    assert_eq!(status, 200, "{health}");
    assert!(health["kv"]["probes"].as_u64().unwrap() >= 2, "{health}");
    assert!(
        health["kv"]["previous_probe_at_unix_ms"].as_u64().is_some(),
        "{health}"
    );
}

fn ready_check<'a>(ready: &'a Value, name: &str) -> &'a Value {
    &ready["checks"][name]
}

/// The scripted LLM and devgraph up: ready is 200 without a credential, every check has a
/// latency, and the LLM is asked once for many probes within the cache period.
#[tokio::test]
async fn ready_is_200_when_everything_answers_and_asks_the_llm_once_per_period() {
    let llm = kg_e2e::llm_stub::ScriptedLlm::start().await;
    let stack = Stack::start_with(&llm.variables()).await.unwrap();
    let host = &stack.host;
    for n in 0..8 {
        let (status, ready) = host.get_as(None, "/health/ready").await.unwrap();
        assert_eq!(status, 200, "{ready}");
        assert_eq!(ready["status"], "ready");
        assert_eq!(ready["down"], serde_json::json!([]));
        for name in ["graph", "llm", "kv"] {
            let check = ready_check(&ready, name);
            assert_eq!(check["ok"], true, "{check}");
            assert!(check["latency_ms"].as_f64().unwrap() >= 0.0, "{check}");
            assert_eq!(check.get("error"), None, "{check}");
        }
        // The first probe asked; the rest reuse its outcome and say how old it is.
        assert_eq!(
            ready_check(&ready, "llm").get("cached").is_some(),
            n > 0,
            "{ready}"
        );
    }
    assert_eq!(llm.models_calls().await, 1);
    assert!(
        llm.requests().is_empty(),
        "a probe must not generate: {:?}",
        llm.requests()
    );
    // The detailed /health shows the same cached reachability, the configuration checks
    // say they contacted nothing, and the catalog's version is listed.
    let (_, health) = host.get("/health").await.unwrap();
    assert_eq!(health["llm"]["ok"], true, "{health}");
    assert_eq!(llm.models_calls().await, 1);
    let configured = check(component(&health, "router"), "llm_configuration");
    assert!(
        configured["detail"]
            .as_str()
            .unwrap()
            .contains("not contacted"),
        "{configured}"
    );
    assert!(
        health["catalog_version"]
            .as_str()
            .unwrap()
            .starts_with("sha256:"),
        "{health}"
    );
}

/// Nothing listens at the LLM's address: 503 naming the LLM, with a reason that names
/// no internal address (the route is public).
#[tokio::test]
async fn ready_is_503_naming_the_llm_when_nothing_listens_there() {
    let graph = Graph::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut vars = graph.variables();
    vars.push(("llm_origin", "http://127.0.0.1:9".to_string()));
    let host = AppHost::start(&app_manifest(), &dir.path().join("kv.db"), &vars)
        .await
        .unwrap();
    let (status, ready) = host.get_as(None, "/health/ready").await.unwrap();
    assert_eq!(status, 503, "{ready}");
    assert_eq!(ready["status"], "not_ready");
    assert_eq!(ready["down"], serde_json::json!(["llm"]));
    let llm = ready_check(&ready, "llm");
    assert_eq!(llm["ok"], false);
    let error = llm["error"].as_str().unwrap();
    assert!(error.contains("[llm]/v1/models"), "{error}");
    assert!(!ready.to_string().contains("127.0.0.1:9"), "{ready}");
    assert_eq!(ready_check(&ready, "graph")["ok"], true, "{ready}");
    // /health (authenticated) lists it too, but its status is the components' own.
    let (status, health) = host.get("/health").await.unwrap();
    assert_eq!(status, 200, "{health}");
    assert_eq!(health["llm"]["ok"], false, "{health}");
}

/// The LLM stops answering and returns; the graph freezes and returns: ready follows each
/// (the LLM cache off, so every probe asks).
#[tokio::test]
async fn ready_goes_503_when_the_graph_or_llm_stops_and_back_to_200_when_they_return() {
    let llm = kg_e2e::llm_stub::ScriptedLlm::start().await;
    let mut vars = llm.variables();
    vars.push(("health_llm_cache_s", "0".to_string()));
    let stack = Stack::start_with(&vars).await.unwrap();
    let host = &stack.host;
    let ready = || async { host.get_as(None, "/health/ready").await.unwrap() };

    assert_eq!(ready().await.0, 200);
    llm.set_models_status(503);
    let (status, body) = ready().await;
    assert_eq!(
        (status, &body["down"]),
        (503, &serde_json::json!(["llm"])),
        "{body}"
    );
    assert!(
        body["checks"]["llm"]["error"]
            .as_str()
            .unwrap()
            .contains("answered 503"),
        "{body}"
    );
    llm.set_models_status(200);
    assert_eq!(ready().await.0, 200);

    stack.graph.freeze().unwrap();
    let (status, body) = ready().await;
    stack.graph.resume().unwrap();
    assert_eq!(
        (status, &body["down"]),
        (503, &serde_json::json!(["graph"])),
        "{body}"
    );
    assert!(
        body["checks"]["graph"]["error"]
            .as_str()
            .unwrap()
            .contains("no answer within"),
        "{body}"
    );
    assert_eq!(ready().await.0, 200);
}

#[tokio::test]
async fn ready_is_503_naming_the_graph_when_nothing_listens_there() {
    let llm = kg_e2e::llm_stub::ScriptedLlm::start().await;
    let dir = tempfile::tempdir().unwrap();
    let mut vars = graph_at("http://127.0.0.1:9");
    vars.extend(llm.variables());
    let host = AppHost::start(&app_manifest(), &dir.path().join("kv.db"), &vars)
        .await
        .unwrap();
    let (status, ready) = host.get_as(None, "/health/ready").await.unwrap();
    assert_eq!(status, 503, "{ready}");
    assert_eq!(ready["down"], serde_json::json!(["graph"]));
    assert!(
        ready_check(&ready, "graph")["error"]
            .as_str()
            .unwrap()
            .contains("unreachable"),
        "{ready}"
    );
    assert!(!ready.to_string().contains("127.0.0.1:9"), "{ready}");
}
