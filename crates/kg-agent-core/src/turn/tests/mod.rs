//! Whole turns driven natively against fakes of every port (no HTTP, no host): seed 000
//! §11's payment run, the step limit, tool and LLM failures, approval and rejection,
//! cancellation; and property tests over random scripts (seed 002 properties 5, 8–10).

mod detached;
mod direct;
mod fakes;
mod fresh;
mod kv_cost;
mod out_of_time;
mod properties;
mod react_streamed;

use super::deadline::Deadline;
use super::{CANCELLED_ROUTE, Settings, TurnResult, resolve, turn};
use crate::events::Event;
use crate::memory;
use fakes::{Say, World, actor};
use kg_http::ApiError;
use kg_http::chat::{ChatBody, RoutingMode};
use kg_wit::kg::router::router::Intent;
use serde_json::json;

pub fn body(message: &str, conversation: Option<&str>) -> ChatBody {
    ChatBody {
        message: message.into(),
        conversation_id: conversation.map(str::to_string),
        routing_mode: RoutingMode::Rule,
        trace: false,
    }
}

pub fn run(world: &mut World, message: &str, max_steps: u32) -> Result<TurnResult, ApiError> {
    run_in(world, message, None, max_steps)
}

fn run_in(
    world: &mut World,
    message: &str,
    conversation: Option<&str>,
    max_steps: u32,
) -> Result<TurnResult, ApiError> {
    turn(
        &body(message, conversation),
        &Settings {
            max_steps,
            deadline: Deadline::NONE,
        },
        &actor(true),
        &mut world.ports(),
    )
}

/// "how many suppliers are there?" as one turn of `conversation` (a new one when None)
/// on the store `kv` instead of the world's own: for tests that count or watch what a
/// turn does to the store.
pub fn ask_on(
    world: &mut World,
    kv: &dyn memory::Kv,
    conversation: Option<&str>,
) -> Result<TurnResult, ApiError> {
    let mut ports = super::ports::Ports {
        kv,
        model: &mut world.model,
        tools: &mut world.tools,
        router: &mut world.router,
        summariser: &mut world.summariser,
        executor: &mut world.executor,
        sink: &mut world.sink,
        clock: &world.clock,
        chain: &mut world.chain,
    };
    turn(
        &body("how many suppliers are there?", conversation),
        &Settings {
            max_steps: 5,
            deadline: Deadline::NONE,
        },
        &actor(true),
        &mut ports,
    )
}

/// Seed 000 §11: "pay all of supplier XXX's orders" — find the supplier, its orders,
/// propose the plan, run it as a batch with progress, report.
fn payment_script(ids: &[String]) -> Vec<Say> {
    vec![
        Say::Tools(vec![("search_instances", json!({"query": "ACME"}))]),
        Say::Tools(vec![(
            "get_instance_neighbors",
            json!({"id": "SUP_ACME", "relationship": "SUPPLIES"}),
        )]),
        Say::Tools(vec![(
            "propose_action_plan",
            json!({"entity_type": "PurchaseOrder", "action_name": "makePayment", "entity_ids": ids, "parameters": {}}),
        )]),
        Say::Text("计划已记录"),
    ]
}

pub fn last_turn(world: &World, conversation: &str) -> memory::Turn {
    memory::load(&world.kv, conversation)
        .unwrap()
        .turns
        .last()
        .cloned()
        .expect("a remembered turn")
}

#[test]
fn seed_000_payment_flow_streams_plan_progress_report_and_answer() {
    let mut world = World::new(Intent::Action, vec![], true);
    let ids = world.tools.order_ids();
    world.model.script = payment_script(&ids).into();
    world.executor.fail = vec!["PO_003", "PO_015"];
    let result = run(&mut world, "把供应商ACME的全部订单进行付款", 10).unwrap();

    let kinds = world.sink.kinds();
    assert_eq!(kinds[0], "conversation_id");
    assert_eq!(kinds[1], "thinking");
    assert_eq!(kinds[2], "route");
    let plan_at = kinds.iter().position(|k| *k == "action_plan").unwrap();
    let complete_at = kinds.iter().position(|k| *k == "action_complete").unwrap();
    let progress: Vec<&Event> = world
        .sink
        .events
        .iter()
        .filter(|e| matches!(e, Event::ActionProgress(_)))
        .collect();
    assert_eq!(progress.len(), 20);
    for (i, e) in progress.iter().enumerate() {
        let Event::ActionProgress(p) = e else {
            unreachable!()
        };
        assert_eq!(p["completed"], i + 1);
        assert_eq!(p["total"], 20);
    }
    assert!(plan_at < complete_at);
    let Event::ActionPlan(plan) = &world.sink.events[plan_at] else {
        unreachable!()
    };
    assert_eq!(plan["targets"].as_array().unwrap().len(), 20);
    assert_eq!(plan["targets"][0]["entity_name"], "Order PO_001");
    assert_eq!(plan["actor"], "alice");
    let errors: Vec<String> = world
        .sink
        .events
        .iter()
        .filter_map(|e| match e {
            Event::ActionError(o) => Some(o["entity_id"].as_str().unwrap().to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(errors, ["PO_003", "PO_015"]);
    let Event::ActionComplete(report) = &world.sink.events[complete_at] else {
        unreachable!()
    };
    assert_eq!(report["succeeded"], 18);
    assert_eq!(report["failed"], 2);
    // The report streamed after the batch, then the whole answer in `completed`, last.
    assert_eq!(
        &kinds[complete_at + 1..complete_at + 3],
        ["thinking", "content_start"]
    );
    assert!(matches!(
        world.sink.events.last(),
        Some(Event::Completed(_))
    ));
    assert_eq!(
        result.answer,
        "已完成 20 个订单的付款处理。成功: 18 个, 失败: 2 个"
    );
    assert_eq!(result.actions.as_ref().unwrap()["succeeded"], 18);
    assert_eq!(result.steps, 4);
    assert_eq!(world.model.calls, 4);
    assert_eq!(world.executor.log.borrow().started.len(), 1);
    // The question, the tool observations and the answer are remembered.
    let last = last_turn(&world, &result.conversation_id);
    assert_eq!(last.role, "assistant");
    assert_eq!(last.content, result.answer);
}

#[test]
fn the_step_limit_stops_the_loop_and_the_answer_says_so() {
    let mut world = World::new(Intent::Query, vec![], false);
    world.model.then = Say::Tools(vec![("search_instances", json!({"query": "x"}))]);
    let result = run(&mut world, "who supplies everything?", 3).unwrap();
    assert_eq!(world.model.calls, 3);
    assert_eq!(result.steps, 3);
    let request = &world.summariser.requests[0];
    assert!(request.note.as_deref().unwrap().contains("step limit (3)"));
    assert_eq!(request.evidence.len(), 3);
    assert!(matches!(world.sink.events.last(), Some(Event::Completed(c)) if c.steps == 3));
    // The three tool results are remembered as one turn, a line each (one write).
    let turns = memory::load(&world.kv, &result.conversation_id)
        .unwrap()
        .turns;
    let roles: Vec<&str> = turns.iter().map(|t| t.role.as_str()).collect();
    assert_eq!(roles, ["user", "tool", "assistant"]);
    let lines: Vec<&str> = turns[1].content.lines().collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(
        lines.iter().all(|l| l.starts_with("search_instances: ")),
        "{lines:?}"
    );
}

#[test]
fn a_failing_tool_is_reported_and_the_turn_still_answers() {
    let script = vec![
        Say::Tools(vec![
            ("no_such_tool", json!({})),
            ("search_instances", json!({"query": "ACME"})),
        ]),
        Say::Text("ACME is a supplier"),
    ];
    let mut world = World::new(Intent::Query, script, false);
    let result = run(&mut world, "who is ACME?", 10).unwrap();
    let results: Vec<bool> = world
        .sink
        .events
        .iter()
        .filter_map(|e| match e {
            Event::ToolResult { ok, .. } => Some(*ok),
            _ => None,
        })
        .collect();
    assert_eq!(results, [false, true]);
    // Only the good observation is evidence, plus the model's draft.
    let evidence = &world.summariser.requests[0].evidence;
    assert_eq!(evidence.len(), 2);
    assert_eq!(evidence[1].source, "agent_draft");
    assert_eq!(result.answer, "answer from 2 pieces of evidence");
}

#[test]
fn an_llm_that_is_down_is_a_json_error_or_a_stream_error_with_its_endpoint() {
    let mut world = World::new(Intent::Query, vec![Say::Fail], false);
    let e = run(&mut world, "who is ACME?", 10).unwrap_err();
    assert_eq!((e.status, e.code.as_str()), (503, "llm_unavailable"));
    assert_eq!(e.detail.as_ref().unwrap()["attempts"], 3);

    let mut world = World::new(Intent::Query, vec![Say::Fail], true);
    run(&mut world, "who is ACME?", 10).unwrap();
    let Some(Event::Failure { code, detail, .. }) = world.sink.events.last() else {
        panic!("{:?}", world.sink.kinds());
    };
    assert_eq!(code, "llm_unavailable");
    assert_eq!(detail["provider"], "http://llm.test/v1");
}

#[test]
fn a_router_that_fails_falls_back_to_answering_as_a_question() {
    let mut world = World::new(Intent::Query, vec![Say::Text("hello")], false);
    world.router.fail = true;
    let result = run(&mut world, "who is ACME?", 10).unwrap();
    assert_eq!(result.route["method"], "fallback");
    assert_eq!(world.model.calls, 1);
}

#[test]
fn a_plan_that_needs_approval_waits_then_runs_on_yes() {
    let mut world = World::new(Intent::Action, vec![], true);
    let ids = world.tools.order_ids();
    world.model.script = payment_script(&ids).into();
    world.executor.approval_required = true;
    let first = run(&mut world, "pay all ACME orders", 10).unwrap();
    assert!(first.awaiting_approval);
    assert!(world.sink.kinds().contains(&"approval_required"));
    assert!(world.executor.log.borrow().started.is_empty());
    let conversation = first.conversation_id.clone();

    world.sink.events.clear();
    let second = run_in(&mut world, "yes", Some(&conversation), 10).unwrap();
    let log = world.executor.log.borrow();
    assert_eq!(log.started.len(), 1);
    assert_eq!(log.started[0].approval_token.as_deref(), Some("tok-1"));
    assert_eq!(second.route["method"], "approval");
    assert_eq!(second.actions.as_ref().unwrap()["succeeded"], 20);
    // No LLM call for the reply itself: the plan was decided already.
    assert_eq!(world.model.calls, 4);
    // The note is gone: a second "yes" is an ordinary message.
    assert!(
        crate::approval::pending_token(&world.kv, &conversation)
            .unwrap()
            .is_none()
    );
}

#[test]
fn a_rejected_plan_runs_nothing() {
    let mut world = World::new(Intent::Action, vec![], false);
    let ids = world.tools.order_ids();
    world.model.script = payment_script(&ids).into();
    world.executor.approval_required = true;
    let first = run(&mut world, "pay all ACME orders", 10).unwrap();
    let token = first.approval.as_ref().unwrap()["approval_token"]
        .as_str()
        .unwrap()
        .to_string();
    let rejected = resolve(&token, false, None, &actor(true), &mut world.ports()).unwrap();
    assert_eq!(rejected.answer, "Cancelled: nothing was executed.");
    let log = world.executor.log.borrow();
    assert!(log.started.is_empty());
    assert_eq!(log.rejected, [token]);
    assert_eq!(
        last_turn(&world, &first.conversation_id).content,
        rejected.answer
    );
}

#[test]
fn a_caller_who_may_not_act_is_not_offered_the_plan_tool() {
    let mut world = World::new(Intent::Action, vec![Say::Text("I cannot")], false);
    turn(
        &body("pay all ACME orders", None),
        &Settings {
            max_steps: 5,
            deadline: Deadline::NONE,
        },
        &actor(false),
        &mut world.ports(),
    )
    .unwrap();
    assert!(world.executor.log.borrow().started.is_empty());
}

#[test]
fn a_client_that_leaves_during_an_llm_call_stops_the_turn() {
    let script = vec![
        Say::Tools(vec![("search_instances", json!({"query": "ACME"}))]),
        Say::LeaveDuringCall,
    ];
    let mut world = World::new(Intent::Query, script, true);
    let e = run(&mut world, "who is ACME?", 10).unwrap_err();
    assert_eq!(e.code, "client_gone");
    // The fakes assert no call starts after the client left; and none did.
    assert_eq!(world.model.calls, 2);
    assert!(world.summariser.requests.is_empty());
    let conversation = match &world.sink.events[0] {
        Event::ConversationId(id) => id.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        last_turn(&world, &conversation).route.as_deref(),
        Some(CANCELLED_ROUTE)
    );
}

#[test]
fn a_client_that_leaves_between_tool_calls_gets_no_further_tool_call() {
    let script = vec![Say::Tools(vec![
        ("search_instances", json!({"query": "ACME"})),
        ("search_instances", json!({"query": "BETA"})),
    ])];
    let mut world = World::new(Intent::Query, script, true);
    // conversation_id, thinking, route, thinking, trace, tool_call, tool_result,
    // tool_call: leave at the second tool call.
    world.sink.leave_after = Some(8);
    let e = run(&mut world, "who is ACME?", 10).unwrap_err();
    assert_eq!(e.code, "client_gone");
    assert_eq!(world.tools.calls.len(), 1);
    assert_eq!(world.model.calls, 1);
}

#[test]
fn a_client_that_leaves_during_a_batch_lets_the_chunk_finish_and_starts_no_more() {
    let mut world = World::new(Intent::Action, vec![], true);
    let ids = world.tools.order_ids();
    world.model.script = payment_script(&ids).into();
    world.executor.leave_after_chunks = Some((2, world.gone()));
    let e = run(&mut world, "pay all ACME orders", 10).unwrap_err();
    assert_eq!(e.code, "client_gone");
    let log = world.executor.log.borrow();
    assert!(log.cancelled);
    // Two chunks of five ran; the third was never started.
    assert_eq!(log.chunks_pulled, 2);
    // No LLM-written report for a client that is not there.
    assert!(world.summariser.requests.is_empty());
    let turns = memory::load(&world.kv, &world_conversation(&world))
        .unwrap()
        .turns;
    let report = &turns[turns.len() - 2];
    assert!(
        report.content.contains("10 of 20 succeeded"),
        "{}",
        report.content
    );
    assert_eq!(
        turns.last().unwrap().route.as_deref(),
        Some(CANCELLED_ROUTE)
    );
}

pub fn world_conversation(world: &World) -> String {
    match &world.sink.events[0] {
        Event::ConversationId(id) => id.clone(),
        other => panic!("{other:?}"),
    }
}
