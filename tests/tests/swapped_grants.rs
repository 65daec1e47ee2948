//! A swapped component gets only what spin.toml grants it (issue #38 item 4), on real
//! Spin: the capability-probe router of `tests/fixtures/router-probe/` (Python,
//! componentize-py, a third party's code as far as kg-agent knows) tries a GET to an
//! origin the dispatcher may reach and reads the dispatcher's variables, one of them a
//! secret. With per-dependency grants (Spin 4's `inherit_configuration`) and none for the
//! router, Spin's deny adapter refuses both and the origin sees no request; the same
//! router granted everything (`inherit_configuration = true`) reaches the origin and reads
//! the secret, which shows the probe is not refused for some other reason.
//!
//! Spin only: per-dependency grants are Spin's composition, which devhost does not
//! reimplement (devhost gives dependencies what spin.toml's component-wide switch gives).
//! CI's Spin pass runs it.

use kg_e2e::swapped_router::{manifest_with_router_grant, probe_router};
use kg_e2e::{AppHost, HostKind};
use serde_json::{Value, json};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

/// The LLM key the dispatcher is given: a secret the router must not read.
const SECRET: &str = "sk-probe-secret-5d1e";

/// The router's report of one `probe …` turn (its decision's reason), and the whole answer.
async fn probe(router: &std::path::Path, grant: &str, target: &MockServer) -> (Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let manifest = manifest_with_router_grant(dir.path(), router, grant).unwrap();
    // The target is the LLM's origin: in the dispatcher's allowed_outbound_hosts. A
    // clarification needs no LLM call, so any request it sees is the router's.
    let variables = [
        ("llm_origin", target.uri()),
        ("llm_api_key", SECRET.to_string()),
    ];
    let host = AppHost::start(&manifest, &dir.path().join("kv.db"), &variables)
        .await
        .unwrap();
    let message = format!("probe {} llm_api_key llm_origin", target.uri());
    let body = json!({"message": message, "routing_mode": "rule"}).to_string();
    let (status, answer) = host.send("POST", "/chat", &body).await.unwrap();
    assert_eq!(status, 200, "{answer}");
    let reason = answer["route"]["reason"].as_str().unwrap_or_default();
    let report: Value = serde_json::from_str(reason)
        .unwrap_or_else(|e| panic!("the probe router's reason is not its report ({e}): {answer}"));
    (report, answer.to_string())
}

async fn probes_seen(target: &MockServer) -> usize {
    let requests = target.received_requests().await.unwrap_or_default();
    requests
        .iter()
        .filter(|r| r.url.path() == "/probe-from-router")
        .count()
}

#[tokio::test]
async fn a_swapped_router_without_grants_cannot_reach_the_network_or_read_secrets() {
    if HostKind::from_env() != HostKind::Spin {
        eprintln!(
            "swapped_grants: skipped on devhost (per-dependency grants are Spin's composition; run with KG_E2E_HOST=spin, as CI's Spin pass does)"
        );
        return;
    }
    let router = probe_router().await.unwrap();
    let target = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&target)
        .await;

    let (denied, answer) = probe(&router, "false", &target).await;
    eprintln!("swapped_grants: granted nothing, the router reports {denied}");
    let http = denied["http"].as_str().unwrap();
    assert!(
        http.starts_with("refused")
            && http.contains("\"wasi:http/outgoing-handler\" is not permitted"),
        "{denied}"
    );
    for name in ["llm_api_key", "llm_origin"] {
        let outcome = denied["variables"][name].as_str().unwrap();
        assert!(
            outcome.starts_with("refused") && outcome.contains("Undefined"),
            "{name}: {denied}"
        );
    }
    assert!(!answer.contains(SECRET), "{answer}");
    assert_eq!(
        probes_seen(&target).await,
        0,
        "the origin saw the router's request"
    );

    // The control: granted everything the dispatcher has, the same probe gets through.
    let (granted, _) = probe(&router, "true", &target).await;
    eprintln!("swapped_grants: granted everything, the router reports {granted}");
    assert_eq!(granted["http"], "answered 200", "{granted}");
    assert_eq!(
        granted["variables"]["llm_api_key"],
        format!("read {SECRET}"),
        "{granted}"
    );
    assert_eq!(probes_seen(&target).await, 1);
}
