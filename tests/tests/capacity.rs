//! 200 requests of each kind at once (DESIGN.md §13): liveness, a tool call and a 0-step
//! chat turn (`/health` is in health.rs). On devhost every one is answered; on real Spin
//! with its default instance pool, as many as the component's footprint allows, and the
//! rest refused at once by Spin (tests/src/capacity.rs says exactly what is asserted).

use kg_e2e::capacity::{self, Request};
use kg_e2e::llm_stub::{ScriptedLlm, text};
use kg_e2e::{Stack, app_manifest};
use std::time::Duration;

const AT_ONCE: usize = 200;
const DEADLINE: Duration = Duration::from_secs(60);

#[tokio::test]
async fn two_hundred_liveness_probes_at_once_all_answer() {
    let stack = Stack::start().await.unwrap();
    let footprint = capacity::footprint(&app_manifest(), "liveness").unwrap();
    // Liveness is its own component, with no dependencies: one memory's worth.
    assert_eq!(footprint.memories, 1, "{footprint:?}");
    assert!(
        footprint.spin_default_capacity >= AT_ONCE as u64,
        "{footprint:?}"
    );
    let probe = Request {
        method: "GET",
        path: "/health/live".into(),
        body: String::new(),
        authenticated: false,
    };
    let burst = capacity::burst(&stack.host, &probe, AT_ONCE, DEADLINE).await;
    capacity::check(&stack.host, &footprint, "GET /health/live", &burst).unwrap();
}

#[tokio::test]
async fn two_hundred_tool_calls_at_once_answer_up_to_the_pool() {
    let stack = Stack::start().await.unwrap();
    let footprint = capacity::footprint(&app_manifest(), "dispatcher").unwrap();
    let call = Request {
        method: "POST",
        path: "/tools/get_node_statistics".into(),
        body: r#"{"label": "Supplier"}"#.into(),
        authenticated: true,
    };
    let burst = capacity::burst(&stack.host, &call, AT_ONCE, DEADLINE).await;
    capacity::check(
        &stack.host,
        &footprint,
        "POST /tools/get_node_statistics",
        &burst,
    )
    .unwrap();
}

#[tokio::test]
async fn two_hundred_chat_turns_at_once_answer_up_to_the_pool() {
    let llm = ScriptedLlm::start().await;
    llm.then((0..AT_ONCE).map(|_| text("Hello!")));
    let stack = Stack::start_with(&llm.variables()).await.unwrap();
    let footprint = capacity::footprint(&app_manifest(), "dispatcher").unwrap();
    let turn = Request {
        method: "POST",
        path: "/chat".into(),
        body: r#"{"message": "hello", "routing_mode": "rule"}"#.into(),
        authenticated: true,
    };
    let burst = capacity::burst(&stack.host, &turn, AT_ONCE, DEADLINE).await;
    capacity::check(&stack.host, &footprint, "POST /chat", &burst).unwrap();
    // Each turn that ran asked the LLM once; a refused one never reached it.
    assert_eq!(
        llm.remaining(),
        AT_ONCE - burst.succeeded(),
        "{}",
        burst.summary()
    );
}
