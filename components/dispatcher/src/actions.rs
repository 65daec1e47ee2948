//! The action endpoints over the action-executor component: catalog, dry run, execution
//! (JSON, or SSE progress for a batch), the action log and undo.

use crate::identity::Principal;
use kg_agent_core::turn::ports::EventSink;
use kg_http::ApiError;
use kg_http::actions::{
    action_spec_json, action_summary_json, execute_body, log_page_json, outcome_json,
    plan_decision_json, request_plan_json, summary_json, validate_body, validation_json,
};
use kg_http::query::query_param;
use kg_http::sse;
use kg_identity::Permission;
use kg_wit::kg::action_executor::action_executor::{
    self as executor, BatchPoll, BatchRun, ExecutionRequest, PlanRequest,
};
use kg_wit::types::{BatchSummary, EntityOutcome};
use serde_json::{Value, json};
use spin_sdk::http::ResponseOutparam;
use spin_sdk::http::{Request, Response};

/// How often an idle stream gets a heartbeat comment (DESIGN.md §3).
const HEARTBEAT_MS: u32 = 10_000;

pub fn list(query: &str) -> Result<Response, ApiError> {
    let entity_type = query_param(query, "entity_type");
    let actions = executor::list_actions(entity_type.as_deref())?;
    let list: Vec<Value> = actions.iter().map(action_summary_json).collect();
    Ok(crate::json_response(200, &json!({ "actions": list })))
}

pub fn get(entity_type: &str, action: &str) -> Result<Response, ApiError> {
    let spec = executor::get_action(entity_type, action)?;
    Ok(crate::json_response(200, &action_spec_json(&spec)))
}

pub fn validate(
    who: &Principal,
    entity_type: &str,
    action: &str,
    body: &[u8],
) -> Result<Response, ApiError> {
    let (ids, parameters) = validate_body(&kg_http::body::json_object(body)?)?;
    let results = crate::causal::executor(|| {
        executor::validate(&who.caller, entity_type, action, &ids, &parameters)
    })?;
    let executable = results.iter().filter(|v| v.can_execute).count();
    Ok(crate::json_response(
        200,
        &json!({
            "entity_type": entity_type,
            "action_name": action,
            "total": results.len(),
            "can_execute": executable,
            "results": results.iter().map(validation_json).collect::<Vec<_>>(),
        }),
    ))
}

/// `POST /actions/{type}/{name}/plan`: may the caller run it, and must a person approve it
/// first? When one must, the answer carries the approval token an approver redeems.
pub fn plan(
    who: &Principal,
    entity_type: &str,
    action: &str,
    body: &[u8],
) -> Result<Response, ApiError> {
    let (ids, parameters) = validate_body(&kg_http::body::json_object(body)?)?;
    let request = PlanRequest {
        entity_type: entity_type.into(),
        action_name: action.into(),
        entity_ids: ids,
        parameters,
        conversation: None,
    };
    let decision = crate::causal::executor(|| executor::plan(&who.caller, &request))?;
    Ok(crate::json_response(
        200,
        &plan_decision_json(entity_type, action, &decision),
    ))
}

/// What an execute request turns into: a JSON answer, or a batch to stream.
pub enum Execution {
    Done(Response),
    Stream(ExecutionRequest, BatchRun),
}

pub fn execute(
    request: &Request,
    who: &Principal,
    entity_type: &str,
    action: &str,
) -> Result<Execution, ApiError> {
    let header = request
        .header("idempotency-key")
        .and_then(|v| v.as_str())
        .map(str::to_string);
    let (execution, stream_in_body) = execute_body(
        entity_type,
        action,
        &kg_http::body::json_object(request.body())?,
        header,
        &who.caller,
    )?;
    // Redeeming an approval is an approver's act; running a plan an operator's.
    if execution.approval_token.is_some() {
        who.require(Permission::ActionsApprove)?;
    } else {
        who.require(Permission::ActionsExecute)?;
    }
    // The same reading of `Accept` as /chat/approve's (media types are case-insensitive,
    // `q=0` refuses).
    let wants_stream = stream_in_body
        || sse::accepts_event_stream(request.header("accept").and_then(|v| v.as_str()));
    if wants_stream {
        let run = crate::causal::executor(|| executor::start_batch(&execution))?;
        return Ok(Execution::Stream(execution, run));
    }
    let mut span = kg_agent_core::telemetry::batch_span(
        &execution.entity_type,
        &execution.action_name,
        execution.entity_ids.len(),
    );
    let summary = match crate::causal::executor(|| executor::execute(&execution)) {
        Ok(mut summary) => {
            crate::audience::withhold_in_summary(&mut summary, crate::audience::view().as_ref());
            summary
        }
        Err(e) => {
            let error = ApiError::from(e);
            span.fail(&error.code, &error.message);
            return Err(error);
        }
    };
    kg_agent_core::telemetry::batch_finished(&mut span, &summary);
    drop(span);
    Ok(Execution::Done(crate::json_response(
        200,
        &summary_json(&summary),
    )))
}

/// How a batch stream frames its moments: the route's SSE events ([`RouteEvents`]) or an
/// MCP call's progress notifications and result (`mcp::McpFrames`). [`drive`] does the
/// rest, the same for both.
pub trait BatchFrames {
    /// What the stream opens with.
    fn started(&mut self, execution: &ExecutionRequest, total: u32) -> Vec<Vec<u8>>;
    /// One entity finished, the `completed`th of `total`.
    fn progress(&mut self, outcome: &EntityOutcome, completed: u32, total: u32) -> Vec<Vec<u8>>;
    /// The batch's report: the stream's last frames.
    fn finished(&mut self, summary: &BatchSummary) -> Vec<Vec<u8>>;
    /// The batch could not go on: the stream's last frames.
    fn failed(&mut self, error: &ApiError) -> Vec<Vec<u8>>;
}

/// `POST /actions/{type}/{name}/execute` as SSE: `action_plan`, then per entity
/// `action_progress` (and `action_error` for a failure), `action_complete` with the report,
/// and `done` last.
pub struct RouteEvents;

impl BatchFrames for RouteEvents {
    fn started(&mut self, execution: &ExecutionRequest, total: u32) -> Vec<Vec<u8>> {
        vec![sse::event(
            "action_plan",
            request_plan_json(execution, total),
        )]
    }

    fn progress(&mut self, o: &EntityOutcome, completed: u32, total: u32) -> Vec<Vec<u8>> {
        let mut frames = vec![sse::event(
            "action_progress",
            json!({
                "completed": completed,
                "total": total,
                "entity_id": o.entity_id,
                "success": o.success,
                "replayed": o.replayed,
            }),
        )];
        if !o.success {
            frames.push(sse::event("action_error", outcome_json(o)));
        }
        frames
    }

    fn finished(&mut self, summary: &BatchSummary) -> Vec<Vec<u8>> {
        let results = json!({"results": summary_json(summary)});
        vec![
            sse::event("action_complete", results),
            sse::event("done", json!({})),
        ]
    }

    fn failed(&mut self, error: &ApiError) -> Vec<Vec<u8>> {
        vec![
            sse::event("error", error.to_json()),
            sse::event("done", json!({})),
        ]
    }
}

/// Streams a batch, framed by `frames`: its opening, a frame per entity that finished,
/// heartbeats while nothing finishes, and its end. A client that goes away cancels the
/// chunks not yet started.
pub async fn drive(
    execution: ExecutionRequest,
    run: BatchRun,
    mut frames: impl BatchFrames,
    extra: &[(String, String)],
    out: ResponseOutparam,
) {
    let Some(mut sink) = crate::sse::open(extra, out) else {
        return;
    };
    let total = run.total();
    for frame in frames.started(&execution, total) {
        sink.raw(&frame);
    }
    let mut completed = 0u32;
    // The batch's pulls (its chunks) nest under one span; its start, made before the
    // stream opened, is the span's sibling.
    let mut span = kg_agent_core::telemetry::batch_span(
        &execution.entity_type,
        &execution.action_name,
        execution.entity_ids.len(),
    );
    let view = crate::audience::view();
    loop {
        if sink.gone() {
            // The client went away: start nothing more.
            run.cancel();
            return;
        }
        let mut poll = crate::causal::executor(|| run.next(HEARTBEAT_MS));
        if let Ok(poll) = &mut poll {
            crate::audience::withhold_in_poll(poll, view.as_ref());
        }
        match poll {
            Ok(BatchPoll::Pending) => sink.raw(&sse::comment("heartbeat")),
            Ok(BatchPoll::Progress(outcomes)) => {
                for outcome in &outcomes {
                    completed += 1;
                    for frame in frames.progress(outcome, completed, total) {
                        sink.raw(&frame);
                    }
                }
            }
            Ok(BatchPoll::Finished(summary)) => {
                kg_agent_core::telemetry::batch_finished(&mut span, &summary);
                drop(span);
                for frame in frames.finished(&summary) {
                    sink.raw(&frame);
                }
                return;
            }
            Err(e) => {
                let error = ApiError::from(e);
                span.fail(&error.code, &error.message);
                drop(span);
                for frame in frames.failed(&error) {
                    sink.raw(&frame);
                }
                return;
            }
        }
    }
}

pub fn log(who: &Principal, query: &str) -> Result<Response, ApiError> {
    let limit = match query_param(query, "limit") {
        None => 50,
        Some(text) => text.parse::<u32>().map_err(|_| {
            ApiError::bad_request(format!("`limit` must be an integer, got `{text}`"))
        })?,
    };
    let cursor = query_param(query, "cursor");
    let mut page =
        crate::causal::executor(|| executor::action_log(&who.caller, cursor.as_deref(), limit))?;
    crate::audience::withhold_in_log(&mut page, crate::audience::view().as_ref());
    Ok(crate::json_response(200, &log_page_json(&page)))
}

/// Creates the indexes the executor relies on (idempotent); run once per database.
pub fn setup(who: &Principal) -> Result<Response, ApiError> {
    let statements = crate::causal::executor(|| executor::ensure_indexes(&who.caller))?;
    Ok(crate::json_response(200, &json!({ "indexes": statements })))
}

pub fn undo(who: &Principal, log_id: &str, body: &[u8]) -> Result<Response, ApiError> {
    let body = kg_http::body::json_object(body)?;
    kg_http::actions::undo_body(&body, &who.caller)?;
    let mut outcome = crate::causal::executor(|| executor::undo(&who.caller, log_id))?;
    crate::audience::withhold_in_outcome(&mut outcome, crate::audience::view().as_ref());
    Ok(crate::json_response(200, &outcome_json(&outcome)))
}
