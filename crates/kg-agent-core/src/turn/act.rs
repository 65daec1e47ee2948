//! Action plans: shown with each target's name, sent to the action executor (which says
//! whether the caller may run it and whether a person must approve it first), parked for
//! approval or executed as a batch with progress, then reported by the summariser.
//!
//! A client that leaves during a batch stops it between chunks: the running chunk
//! finishes, what it applied is reported (action log and conversation), and no new chunk,
//! LLM or graph call starts. The turn's deadline does not cut a running batch (it has its
//! own `action_batch_deadline_ms`): the batch runs to its summary, then the turn ends with
//! the deadline's error instead of the written report.

use super::answer::{Synthesis, synthesise};
use super::ports::{Actor, Ports, Stop};
use super::{
    CANCELLED_ROUTE, DEADLINE_ROUTE, RouteMethod, TurnResult, check_listening, chinese, kv_error,
    remember, stopped,
};
use crate::approval::{self, ActionPlan, Pending};
use crate::events::Event;
use crate::memory;
use kg_http::ApiError;
use kg_http::actions::{outcome_json, summary_json};
use kg_wit::kg::action_executor::action_executor::{BatchPoll, ExecutionRequest, PlanRequest};
use kg_wit::types::BatchSummary;
use serde_json::{Value, json};
use std::collections::HashMap;

/// How long one pull of a running batch waits: short, so a departed client is noticed
/// between pulls within this much (heartbeats are paced by the sink, not by pulls).
const BATCH_WAIT_MS: u32 = 50;

/// The plan as events show it, with who is acting on it (the authenticated subject) and
/// each target's display name (the id when the graph has none).
fn plan_json(plan: &ActionPlan, actor: &Actor, names: &HashMap<String, String>) -> Value {
    let mut value = kg_http::actions::plan_json(
        &plan.entity_type,
        &plan.action_name,
        &plan.entity_ids,
        plan.entity_ids.len(),
        plan.parameters.clone(),
    );
    if let Some(targets) = value["targets"].as_array_mut() {
        for target in targets {
            let id = target["entity_id"].as_str().unwrap_or_default().to_string();
            let name = names.get(&id).cloned().unwrap_or(id);
            target["entity_name"] = json!(name);
        }
    }
    value["actor"] = json!(actor.caller.subject);
    value
}

pub(super) fn plan_action(
    conversation: &str,
    question: &str,
    plan: ActionPlan,
    actor: &Actor,
    p: &mut Ports,
    result: &mut TurnResult,
) -> Result<(), ApiError> {
    let names = p.tools.entity_names(&plan.entity_type, &plan.entity_ids);
    p.sink
        .emit(Event::ActionPlan(plan_json(&plan, actor, &names)));
    check_listening(p)?;
    let request = PlanRequest {
        entity_type: plan.entity_type.clone(),
        action_name: plan.action_name.clone(),
        entity_ids: plan.entity_ids.clone(),
        parameters: plan.parameters.to_string(),
        conversation: Some(conversation.to_string()),
    };
    let decision = p.executor.plan(&actor.caller, &request)?;
    let key = p.clock.unique_id("agent");
    if let (Some(reason), Some(token)) = (decision.reason.clone(), decision.approval_token.clone())
    {
        approval::store(
            p.kv,
            &Pending {
                token: token.clone(),
                conversation_id: conversation.into(),
                question: question.into(),
                plan: plan.clone(),
                idempotency_key: key.clone(),
                created_at: p.clock.now(),
            },
        )
        .map_err(kv_error)?;
        let shown = plan_json(&plan, actor, &names);
        p.sink.emit(Event::ApprovalRequired {
            token: token.clone(),
            reason: reason.clone(),
            plan: shown.clone(),
        });
        result.approval = Some(
            json!({"approval_token": token, "reason": reason, "expires_at": decision.expires_at, "plan": shown}),
        );
        result.awaiting_approval = true;
        result.answer = if chinese(question) {
            format!(
                "计划：对 {} 个 {} 执行 {}。{}。回复“确认”执行，或“取消”放弃。",
                plan.entity_ids.len(),
                plan.entity_type,
                plan.action_name,
                reason
            )
        } else {
            format!(
                "Plan: {} on {} {} entities. {}. Reply \"yes\" to run it or \"no\" to cancel.",
                plan.action_name,
                plan.entity_ids.len(),
                plan.entity_type,
                reason
            )
        };
        p.sink.emit(Event::ContentStart);
        p.sink.emit(Event::Content(result.answer.clone()));
        return Ok(());
    }
    let run = Run {
        question,
        conversation: Some(conversation),
        idempotency_key: Some(key),
        approval_token: None,
    };
    execute_and_report(run, &plan, actor, p, result)
}

/// One execution of a plan.
struct Run<'a> {
    question: &'a str,
    /// Where a cancelled batch's report is remembered.
    conversation: Option<&'a str>,
    idempotency_key: Option<String>,
    approval_token: Option<String>,
}

fn execute_and_report(
    run: Run,
    plan: &ActionPlan,
    actor: &Actor,
    p: &mut Ports,
    result: &mut TurnResult,
) -> Result<(), ApiError> {
    check_listening(p)?;
    let request = ExecutionRequest {
        entity_type: plan.entity_type.clone(),
        action_name: plan.action_name.clone(),
        entity_ids: plan.entity_ids.clone(),
        parameters: plan.parameters.to_string(),
        idempotency_key: run.idempotency_key,
        approval_token: run.approval_token,
        caller: actor.caller.clone(),
        options: None,
    };
    // The batch from its start to its summary; its start and pulls (component calls)
    // nest under it. The written report that follows is the summariser's own span.
    let mut span =
        crate::telemetry::batch_span(&plan.entity_type, &plan.action_name, plan.entity_ids.len());
    let summary = match run_batch(&request, p) {
        Ok(summary) => summary,
        Err(e) => {
            span.fail(&e.code, &e.message);
            return Err(e);
        }
    };
    crate::telemetry::batch_finished(&mut span, &summary);
    drop(span);
    let report = summary_json(&summary);
    p.sink.emit(Event::ActionComplete(report.clone()));
    result.actions = Some(report);
    if let Some(stop) = p.sink.stop() {
        // What the batch applied is in the action log; the conversation says so too,
        // without the LLM-written report (nobody would read it, or there is no time),
        // marked with why it stopped: an approval streamed outside a turn records nothing
        // else.
        let (why, route) = match stop {
            Stop::ClientGone => (
                "Cancelled during the batch (the client disconnected)",
                CANCELLED_ROUTE,
            ),
            Stop::Deadline { .. } => (
                "The turn's deadline passed during the batch",
                DEADLINE_ROUTE,
            ),
        };
        result.answer = format!(
            "{why}: {} of {} succeeded, {} failed or not started, {} unknown.",
            summary.succeeded, summary.total, summary.failed, summary.unknown
        );
        if let Some(conversation) = run.conversation {
            remember(p, conversation, "assistant", &result.answer, Some(route));
        }
        return Err(stopped(p));
    }
    synthesise(
        Synthesis {
            question: run.question,
            history: &[],
            evidence: Vec::new(),
            batch: Some(summary),
            note: None,
            draft: None,
        },
        p,
        result,
    )
}

/// Starts a batch and pulls it to its summary, with progress events; a departed client
/// cancels it (the running chunk finishes). The turn's deadline does not: the batch's own
/// deadline bounds it.
fn run_batch(request: &ExecutionRequest, p: &mut Ports) -> Result<BatchSummary, ApiError> {
    let mut batch = p.executor.start_batch(request)?;
    let total = batch.total();
    let mut completed = 0;
    let mut stopping = false;
    loop {
        if !stopping && p.sink.stop() == Some(Stop::ClientGone) {
            batch.cancel();
            stopping = true;
        }
        match batch.next(BATCH_WAIT_MS)? {
            BatchPoll::Pending => p.sink.heartbeat(),
            BatchPoll::Progress(outcomes) => {
                for o in outcomes {
                    completed += 1;
                    p.sink.emit(Event::ActionProgress(json!({"completed": completed, "total": total, "entity_id": o.entity_id, "success": o.success})));
                    if !o.success {
                        p.sink.emit(Event::ActionError(outcome_json(&o)));
                    }
                }
            }
            BatchPoll::Finished(summary) => return Ok(summary),
        }
    }
}

/// Approves (runs) or rejects a plan waiting for approval. `in_conversation` is set when
/// the answer came as a reply in a conversation, which must be the plan's own. The
/// action-executor redeems or rejects the token atomically in the graph and checks that
/// the actor may.
pub fn resolve(
    token: &str,
    approve: bool,
    in_conversation: Option<&str>,
    actor: &Actor,
    p: &mut Ports,
) -> Result<TurnResult, ApiError> {
    let info = p.executor.get_approval(token)?;
    if let Some(here) = in_conversation
        && info.conversation.as_deref() != Some(here)
    {
        return Err(ApiError::new(
            403,
            "approval_invalid",
            "this approval belongs to another conversation",
        ));
    }
    let note = approval::get(p.kv, token).map_err(kv_error)?;
    let question = note.as_ref().map_or_else(
        || format!("{}.{}", info.entity_type, info.action_name),
        |n| n.question.clone(),
    );
    let plan = ActionPlan {
        entity_type: info.entity_type.clone(),
        action_name: info.action_name.clone(),
        entity_ids: info.entity_ids.clone(),
        parameters: serde_json::from_str(&info.parameters).unwrap_or(json!({})),
    };
    let mut result = TurnResult::new(info.conversation.clone().unwrap_or_default());
    result.route = json!({"intent": "action", "method": RouteMethod::Approval.as_str()});
    result.approval = Some(json!({"approval_token": token, "approved": approve}));
    if approve {
        let names = p.tools.entity_names(&plan.entity_type, &plan.entity_ids);
        p.sink
            .emit(Event::ActionPlan(plan_json(&plan, actor, &names)));
        let run = Run {
            question: &question,
            conversation: info.conversation.as_deref(),
            idempotency_key: None,
            approval_token: Some(token.to_string()),
        };
        if let Err(e) = execute_and_report(run, &plan, actor, p, &mut result) {
            // The token is spent once a batch ran, cancelled or not (its report is
            // remembered already).
            if p.sink.stop().is_some() && result.actions.is_some() {
                forget_note(p, note.as_ref());
                save_bookmarks(p, &info.conversation, in_conversation);
            }
            return Err(e);
        }
    } else {
        p.executor.reject_plan(&actor.caller, token)?;
        result.answer = if chinese(&question) {
            "已取消，未执行任何操作。".into()
        } else {
            "Cancelled: nothing was executed.".into()
        };
        p.sink.emit(Event::ContentStart);
        p.sink.emit(Event::Content(result.answer.clone()));
    }
    forget_note(p, note.as_ref());
    if let Some(conversation) = &info.conversation {
        remember(p, conversation, "assistant", &result.answer, None);
    }
    save_bookmarks(p, &info.conversation, in_conversation);
    Ok(result)
}

/// The conversation's note of a token that is spent.
fn forget_note(p: &Ports, note: Option<&Pending>) {
    if let Some(note) = note
        && let Err(e) = approval::forget(p.kv, note)
    {
        eprintln!("agent: could not forget the approval note: {e}");
    }
}

/// Approved outside a turn (`/chat/approve`): the conversation's next turn must see what
/// this batch wrote. Inside a turn, the turn remembers its own chain.
fn save_bookmarks(p: &Ports, conversation: &Option<String>, in_conversation: Option<&str>) {
    if let Some(conversation) = conversation
        && in_conversation.is_none()
        && let Err(e) = memory::save_bookmarks(p.kv, conversation, &[], &p.chain.current())
    {
        eprintln!("agent: could not remember the graph bookmarks of {conversation}: {e}");
    }
}
