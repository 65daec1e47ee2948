//! The action-executor component: binds `kg:action-executor/action-executor` to kg-actions over the
//! Neo4j Query API. The catalog is validated on load; every execution runs chunked
//! statements that check and apply atomically (see `kg_actions::statement`).

mod access;
mod approvals;
mod catalog;
mod clock;
mod graph_indexes;
mod retry;
mod runner;
mod spec;

use kg_actions::batch::{Batch, BatchOptions, Concurrency, Guards};
use kg_actions::catalog::resolve_parameters;
use kg_actions::log::{entries_statement, page_statement, records, undo_statement};
use kg_actions::outcome::validations;
use kg_actions::statement::{ActionPlan, RunContext};
use kg_identity::Permission;
use kg_wit::types::{BatchSummary, Caller, ComponentStatus, EntityOutcome, Error, ErrorCode, Json};
use neo4j_client::{AccessMode, Value};
use runner::{Poll, Run, Shared};
use serde_json::Value as JsonValue;

wit_bindgen::generate!({
    path: "../../wit",
    world: "action-executor-component",
    with: { "kg:types/types@0.1.0": kg_wit::types },
});

use exports::kg::action_executor::action_executor::{
    ActionSpec, ActionSummary, ApprovalInfo, BatchPoll, BatchRun, ExecutionRequest, Guest,
    GuestBatchRun, LogEntry, LogPage, PlanDecision, PlanRequest, PreconditionCheck, Validation,
};

/// Most distinct entities one request may name.
const MAX_ENTITIES: usize = 10_000;
const MAX_ID_BYTES: usize = 200;

struct ActionExecutor;

impl GuestBatchRun for Run {
    fn total(&self) -> u32 {
        Run::total(self)
    }

    fn next(&self, wait_ms: u32) -> Result<BatchPoll, Error> {
        Ok(match Run::next(self, wait_ms.min(60_000)) {
            Poll::Progress(outcomes) => BatchPoll::Progress(outcomes),
            Poll::Pending => BatchPoll::Pending,
            Poll::Finished(summary) => BatchPoll::Finished(summary),
        })
    }

    fn cancel(&self) {
        Run::cancel(self)
    }
}

impl Guest for ActionExecutor {
    type BatchRun = Run;

    fn use_bookmarks(bookmarks: Vec<String>) {
        kg_spin::graph_bookmarks().replace(bookmarks);
    }

    fn graph_bookmarks() -> Vec<String> {
        kg_spin::graph_bookmarks().current()
    }

    fn use_trace_context(traceparent: String) {
        kg_spin::telemetry::adopt(&traceparent, "action-executor");
    }

    fn take_spans() -> String {
        kg_spin::telemetry::take_spans()
    }

    fn status() -> ComponentStatus {
        let catalog = match catalog::catalog_with_source() {
            Ok((c, source, version)) => kg_wit::types::Check {
                name: "catalog".into(),
                ok: true,
                detail: format!(
                    "{} actions on {} entity types, from {source}, version {version}",
                    c.actions.len(),
                    c.entities.len()
                ),
            },
            Err(e) => kg_wit::types::Check {
                name: "catalog".into(),
                ok: false,
                detail: e.message,
            },
        };
        let catalog_keys: Option<Vec<(String, String)>> = catalog::catalog().ok().map(|c| {
            c.entities
                .values()
                .map(|e| (e.label.clone(), e.key.clone()))
                .collect()
        });
        kg_spin::status(
            "action-executor",
            env!("CARGO_PKG_VERSION"),
            vec![
                kg_spin::configuration_check(kg_spin::NEO4J_VARIABLES),
                kg_spin::graph_check(),
                catalog,
                kg_spin::graph_profile::check(None, catalog_keys.as_deref()),
            ],
        )
    }

    fn list_actions(entity_type: Option<String>) -> Result<Vec<ActionSummary>, Error> {
        let catalog = catalog::catalog()?;
        if let Some(t) = &entity_type
            && catalog.entity(t).is_none()
        {
            let mut e = Error::new(
                ErrorCode::NotFound,
                format!("no entity type `{t}` has actions"),
            );
            let known: Vec<&String> = catalog.entities.keys().collect();
            e.detail = Some(serde_json::json!({"entity_types": known}).to_string());
            return Err(e);
        }
        Ok(catalog
            .actions
            .iter()
            .filter(|a| entity_type.as_ref().is_none_or(|t| &a.entity == t))
            .map(spec::summary)
            .collect())
    }

    fn get_action(entity_type: String, action_name: String) -> Result<ActionSpec, Error> {
        let catalog = catalog::catalog()?;
        Ok(spec::spec(catalog::find(
            &catalog,
            &entity_type,
            &action_name,
        )?))
    }

    fn validate(
        caller: Caller,
        entity_type: String,
        action_name: String,
        entity_ids: Vec<String>,
        parameters: Json,
    ) -> Result<Vec<Validation>, Error> {
        let catalog = catalog::catalog()?;
        let action = catalog::find(&catalog, &entity_type, &action_name)?;
        check_ids(&entity_ids)?;
        let ids = distinct(&entity_ids);
        kg_actions::access::may_run(action, &access::roles(&caller), ids.len())
            .map_err(access::denied)?;
        let given = parse_parameters(&parameters)?;
        let resolved = resolve_parameters(action, &given).map_err(invalid)?;
        let plan = ActionPlan::new(&catalog, action);
        let statement = plan.validate_statement(
            &ids,
            &resolved,
            &clock::now_rfc3339(),
            access::subject(&caller)?,
        );
        let client = client()?;
        let result = client
            .run(&statement.text, statement.params, AccessMode::Read)
            .map_err(graph_error)?;
        let by_id: std::collections::BTreeMap<String, kg_actions::outcome::Validation> =
            validations(&plan, &result)
                .into_iter()
                .map(|v| (v.entity_id.clone(), v))
                .collect();
        Ok(ids
            .iter()
            .map(|id| {
                let v = by_id
                    .get(id)
                    .cloned()
                    .unwrap_or_else(|| kg_actions::outcome::missing(&plan, id));
                Validation {
                    entity_id: v.entity_id.clone(),
                    found: v.found,
                    can_execute: v.can_execute,
                    checks: v
                        .checks
                        .iter()
                        .map(|c| PreconditionCheck {
                            name: c.name.clone(),
                            passed: c.passed,
                            message: c.message.clone(),
                        })
                        .collect(),
                }
            })
            .collect())
    }

    fn execute(request: ExecutionRequest) -> Result<BatchSummary, Error> {
        Ok(start(request)?.finish())
    }

    fn start_batch(request: ExecutionRequest) -> Result<BatchRun, Error> {
        Ok(BatchRun::new(start(request)?))
    }

    fn plan(caller: Caller, request: PlanRequest) -> Result<PlanDecision, Error> {
        let catalog = catalog::catalog()?;
        let action = catalog::find(&catalog, &request.entity_type, &request.action_name)?;
        check_ids(&request.entity_ids)?;
        let ids = distinct(&request.entity_ids);
        kg_actions::access::may_run(action, &access::roles(&caller), ids.len())
            .map_err(access::denied)?;
        let given = parse_parameters(&request.parameters)?;
        let resolved = resolve_parameters(action, &given).map_err(invalid)?;
        approvals::decide(
            &caller,
            action,
            &ids,
            &JsonValue::Object(resolved),
            request.conversation.as_deref(),
        )
    }

    fn get_approval(token: String) -> Result<ApprovalInfo, Error> {
        approvals::get(&token)
    }

    fn reject_plan(caller: Caller, token: String) -> Result<ApprovalInfo, Error> {
        approvals::reject(&caller, &token)
    }

    fn action_log(caller: Caller, cursor: Option<String>, limit: u32) -> Result<LogPage, Error> {
        access::require(&caller, Permission::ActionLogRead)?;
        if !(1..=200).contains(&limit) {
            return Err(invalid(format!(
                "`limit` must be from 1 to 200, got {limit}"
            )));
        }
        let parsed = match &cursor {
            None => None,
            Some(c) => Some(
                c.split_once('|')
                    .ok_or_else(|| invalid("`cursor` is not one this service issued".into()))?,
            ),
        };
        let statement = page_statement(parsed, limit);
        let result = client()?
            .run(&statement.text, statement.params, AccessMode::Read)
            .map_err(graph_error)?;
        let mut entries = records(&result);
        let more = entries.len() > limit as usize;
        entries.truncate(limit as usize);
        let next_cursor = more
            .then(|| entries.last().map(|e| format!("{}|{}", e.at, e.id)))
            .flatten();
        Ok(LogPage {
            entries: entries
                .into_iter()
                .map(|e| LogEntry {
                    changes: e.changes.iter().map(|c| c.to_wit()).collect(),
                    id: e.id,
                    entity_type: e.entity_type,
                    action_name: e.action_name,
                    entity_id: e.entity_id,
                    parameters: e.parameters,
                    idempotency_key: e.idempotency_key,
                    actor: e.actor,
                    at: e.at,
                    undone_by: e.undone_by,
                })
                .collect(),
            next_cursor,
        })
    }

    fn undo(caller: Caller, log_id: String) -> Result<EntityOutcome, Error> {
        access::require(&caller, Permission::ActionsUndo)?;
        let actor = access::subject(&caller)?.to_string();
        if log_id.is_empty() || log_id.len() > MAX_ID_BYTES {
            return Err(invalid("`log_id` must be 1 to 200 bytes".into()));
        }
        let catalog = catalog::catalog()?;
        let client = client()?;
        let statement = entries_statement(std::slice::from_ref(&log_id));
        let found = client
            .run(&statement.text, statement.params, AccessMode::Read)
            .map_err(graph_error)?;
        let record = records(&found).into_iter().next().ok_or_else(|| {
            Error::new(
                ErrorCode::NotFound,
                format!("no action-log entry `{log_id}`"),
            )
        })?;
        if let Some(by) = &record.undone_by {
            return Err(Error::new(
                ErrorCode::Conflict,
                format!("log entry `{log_id}` was already undone by `{by}`"),
            ));
        }
        if record.action_name.starts_with("undo:") {
            return Err(invalid(format!(
                "`{log_id}` is itself an undo; run the action again instead"
            )));
        }
        // One id for every attempt: an attempt whose answer was lost may have committed, and
        // the statement tells it apart (`undone_by` is then this very id).
        let undo_id = clock::unique_id("UNDO");
        let statement = undo_statement(
            &catalog,
            &record,
            &undo_id,
            Some(actor.as_str()),
            &clock::now_rfc3339(),
        )
        .map_err(|m| Error::new(ErrorCode::Conflict, m))?;
        // The statement locks before it reads, so a lost lock race (Neo4j breaks a deadlock
        // by aborting one side) rolls back and is retried like a batch chunk is.
        let result = retry::with_retries(|_| {
            client.run(
                &statement.text,
                statement.params.clone(),
                AccessMode::Write,
            )
        })
        .map_err(|exhausted| {
            if retry::lost_lock_race(&exhausted.error) {
                let mut e = Error::new(
                    ErrorCode::Conflict,
                    format!(
                        "cannot undo `{log_id}` now: it lost to concurrent writes on the same entities {} times in a row ({}); nothing was reverted, try again",
                        exhausted.attempts, exhausted.error
                    ),
                );
                e.retryable = true;
                e
            } else {
                graph_error(exhausted.error)
            }
        })?;
        let row = result.rows_as_maps().into_iter().next();
        let ok = row
            .as_ref()
            .is_some_and(|r| matches!(r.get("ok"), Some(Value::Boolean(true))));
        let undone_by = row
            .as_ref()
            .and_then(|r| r.get("undone_by"))
            .and_then(Value::as_str)
            .map(str::to_string);
        match undone_by {
            // An earlier attempt of this very undo committed and its answer was lost.
            Some(by) if by == undo_id => {}
            Some(by) => {
                return Err(Error::new(
                    ErrorCode::Conflict,
                    format!("log entry `{log_id}` was already undone by `{by}`"),
                ));
            }
            None if !ok => {
                return Err(Error::new(
                    ErrorCode::Conflict,
                    format!(
                        "cannot undo `{log_id}`: {} `{}` changed since",
                        record.entity_type, record.entity_id
                    ),
                ));
            }
            None => {}
        }
        Ok(EntityOutcome {
            entity_id: record.entity_id.clone(),
            success: true,
            changes: record
                .changes
                .iter()
                .map(|c| kg_wit::types::PropertyChange {
                    entity_id: c.entity_id.clone(),
                    property: c.property.clone(),
                    before: c.after.clone(),
                    after: c.before.clone(),
                })
                .collect(),
            failure: None,
            log_id: Some(undo_id),
            replayed: false,
            undone: None,
        })
    }

    fn ensure_indexes(caller: Caller) -> Result<Vec<String>, Error> {
        access::require(&caller, Permission::ActionsSetup)?;
        ensure_indexes_now()
    }
}

fn ensure_indexes_now() -> Result<Vec<String>, Error> {
    let catalog = catalog::catalog()?;
    let client = client()?;
    // Every statement is `IF NOT EXISTS` or `IF EXISTS`, so running one again is safe.
    // Concurrent set-ups meet in the schema's locks: Neo4j breaks their deadlocks by
    // refusing one (a transient error), which is retried.
    let run = |statement: &str| {
        retry::with_retries(|_| client.run_schema(statement)).map_err(|exhausted| exhausted.error)
    };
    let mut ran = Vec::new();
    for statement in kg_actions::catalog::index_statements(&catalog)
        .into_iter()
        .chain([kg_actions::log::log_at_index_statement()])
    {
        run(&statement).map_err(graph_error)?;
        ran.push(statement);
    }
    let mut broken = Vec::new();
    for key in kg_actions::catalog::unique_keys() {
        match run(&key.constraint) {
            Ok(_) => {
                ran.push(key.constraint);
                continue;
            }
            // Still losing to concurrent set-ups: no sign of a legacy index or duplicates.
            Err(e) if e.is_retryable() => return Err(graph_error(e)),
            Err(_) => {}
        }
        // Refused: most likely the plain index an earlier version created on the property.
        let migrated = run(&key.drop_legacy_index).and_then(|_| run(&key.constraint));
        ran.push(key.drop_legacy_index.clone());
        match migrated {
            Ok(_) => ran.push(key.constraint),
            Err(e) if e.is_retryable() => return Err(graph_error(e)),
            Err(e) => {
                // Duplicates already in the graph: keep lookups indexed and say which key.
                let _ = run(&key.legacy_index);
                ran.push(key.legacy_index.clone());
                broken.push(format!("{}.{}: {e}", key.label, key.property));
            }
        }
    }
    // The graph tools' indexes, from the profile as the constraints now stand.
    let declared = kg_spin::graph_profile::load()
        .map_err(|e| Error::new(ErrorCode::Internal, e))?
        .declared;
    let profile_statements = retry::with_retries(|_| graph_indexes::statements(&client, &declared))
        .map_err(|exhausted| graph_error(exhausted.error))?;
    for statement in profile_statements {
        run(&statement).map_err(graph_error)?;
        ran.push(statement);
    }
    if broken.is_empty() {
        return Ok(ran);
    }
    let mut error = Error::new(
        ErrorCode::Conflict,
        format!(
            "could not create the unique key on {} (values that must be unique are already duplicated in the graph; remove the duplicates and run setup again)",
            broken.join("; ")
        ),
    );
    error.detail = Some(serde_json::json!({ "statements": ran }).to_string());
    Err(error)
}

/// Checks a request and sets up its run (nothing is sent until the first pull).
fn start(request: ExecutionRequest) -> Result<Run, Error> {
    let catalog = catalog::catalog()?;
    let action = catalog::find(&catalog, &request.entity_type, &request.action_name)?;
    check_ids(&request.entity_ids)?;
    let ids = distinct(&request.entity_ids);
    let actor = access::subject(&request.caller)?.to_string();
    let given = parse_parameters(&request.parameters)?;
    let parameters = resolve_parameters(action, &given).map_err(invalid)?;
    let options = match request.options {
        None => BatchOptions::default(),
        Some(o) => BatchOptions {
            max_concurrent: o.max_concurrent,
            chunk_size: o.chunk_size,
            chunk_timeout_ms: o.chunk_timeout_ms,
            max_retries: o.max_retries,
        },
    };
    options.validate().map_err(invalid)?;
    if let Some(k) = &request.idempotency_key
        && (k.trim().is_empty() || k.len() > MAX_ID_BYTES)
    {
        return Err(invalid("`idempotency_key` must be 1 to 200 bytes".into()));
    }
    // A plan that needs a person runs only on a token issued for exactly this plan, and
    // redeeming it is atomic in the graph: the second redemption, on any instance, fails.
    // Without a token the caller runs the plan and must be allowed to; with one, the
    // requester was checked when the plan was made and the caller must be an approver.
    let approved_key = match request.approval_token.as_deref() {
        Some(token) => {
            let hash = kg_actions::approval::plan_hash(
                &action.entity,
                &action.name,
                &ids,
                &JsonValue::Object(parameters.clone()),
            );
            Some(approvals::redeem(&request.caller, token, &hash)?)
        }
        None => {
            kg_actions::access::may_run(action, &access::roles(&request.caller), ids.len())
                .map_err(access::denied)?;
            if let Some(why) = approvals::reason(action, ids.len()) {
                return Err(access::coded(
                    ErrorCode::Denied,
                    "approval_required",
                    format!(
                        "{why}: plan it first (POST /actions/{}/{}/plan), then an approver executes it with the approval token",
                        action.entity, action.name
                    ),
                    None,
                ));
            }
            None
        }
    };
    let key = match (approved_key, request.idempotency_key) {
        (Some(approved), _) => approved,
        (None, Some(k)) => k,
        (None, None) => clock::unique_id("KEY"),
    };
    let guards = batch_guards();
    let batch = Batch::new(
        &action.entity,
        &action.name,
        &request.entity_ids,
        &clock::unique_id("LOG"),
        options,
    )
    .with_guards(guards)
    .with_concurrency(batch_concurrency());
    // The graph aborts a chunk's statement past half its timeout (at least 1 s: the
    // Query API counts whole seconds), so an unanswered chunk settles (see `runner`).
    let limit = std::time::Duration::from_millis(u64::from(options.chunk_timeout_ms / 2));
    let shared = Shared {
        plan: ActionPlan::new(&catalog, action),
        client: client()?.with_max_execution_time(Some(limit)),
        run: RunContext {
            idempotency_key: key,
            parameters,
            actor: Some(actor),
            now: clock::now_rfc3339(),
        },
        chunk_timeout_ms: options.chunk_timeout_ms,
        clock_skew_ms: setting("action_clock_skew_ms", 1_000, 60_000),
    };
    Ok(Run::new(shared, batch))
}

/// When a batch gives up: `action_batch_deadline_ms` after it starts (no chunk starts
/// later), and after `action_breaker_failures` consecutive chunk attempts the graph did not
/// answer (0 turns the breaker off).
fn batch_guards() -> Guards {
    let deadline = setting("action_batch_deadline_ms", 300_000, 3_600_000);
    Guards {
        deadline_ms: Some(clock::monotonic_ms() + u64::from(deadline)),
        breaker_after: setting("action_breaker_failures", 3, 1_000),
    }
}

/// `action_concurrency`: `fixed` keeps `max_concurrent` chunks in flight whatever the graph
/// answers; anything else (`adaptive`, the default) lets the window back off under
/// contention (`kg_actions::batch::window`), so an unknown value keeps the safe behaviour.
fn batch_concurrency() -> Concurrency {
    match kg_spin::variable("action_concurrency") {
        Ok(v) if v.trim().eq_ignore_ascii_case("fixed") => Concurrency::Fixed,
        _ => Concurrency::Adaptive,
    }
}

/// A numeric operator setting (default when unset or not a number), capped at `max`.
fn setting(name: &str, default: u32, max: u32) -> u32 {
    kg_spin::number_variable(name, u64::from(default)).min(u64::from(max)) as u32
}

/// Distinct ids in request order.
fn distinct(ids: &[String]) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    ids.iter()
        .filter(|id| seen.insert(id.as_str()))
        .cloned()
        .collect()
}

fn check_ids(ids: &[String]) -> Result<(), Error> {
    if ids.is_empty() {
        return Err(invalid("`entity_ids` must name at least one entity".into()));
    }
    if ids.len() > MAX_ENTITIES {
        return Err(invalid(format!(
            "`entity_ids` names {} entities; at most {MAX_ENTITIES} per request",
            ids.len()
        )));
    }
    if let Some(bad) = ids
        .iter()
        .find(|id| id.trim().is_empty() || id.len() > MAX_ID_BYTES)
    {
        return Err(invalid(format!(
            "`entity_ids`: every id must be 1 to {MAX_ID_BYTES} bytes (got {} bytes)",
            bad.len()
        )));
    }
    Ok(())
}

fn parse_parameters(text: &str) -> Result<JsonValue, Error> {
    if text.trim().is_empty() {
        return Ok(JsonValue::Null);
    }
    serde_json::from_str(text).map_err(|e| invalid(format!("`parameters` is not valid JSON: {e}")))
}

fn invalid(message: String) -> Error {
    Error::new(ErrorCode::InvalidArgument, message)
}

pub(crate) fn graph_error(e: neo4j_client::Neo4jError) -> Error {
    Error::from_graph("graph query failed", &e)
}

pub(crate) fn client() -> Result<neo4j_client::Client<kg_spin::SpinTransport>, Error> {
    kg_spin::graph_client().map_err(|e| Error::new(ErrorCode::Internal, e))
}

export!(ActionExecutor);
