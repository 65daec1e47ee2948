//! The action endpoints' request bodies and JSON answers (seed 000 §6.1 shapes).

use crate::ApiError;
use kg_wit::kg::action_executor::action_executor::{
    ActionSpec, ActionSummary, ApprovalInfo, BatchOptions, ExecutionRequest, LogPage, PlanDecision,
    Validation,
};
use kg_wit::types::{BatchSummary, Caller, EntityOutcome, FailureReason, PropertyChange};
use serde_json::{Map, Value, json};

const EXECUTE_FIELDS: &[&str] = &[
    "entity_ids",
    "parameters",
    "idempotency_key",
    "approval_token",
    "actor",
    "options",
    "stream",
];

/// `{entity_ids, parameters?}` of a validate request.
pub fn validate_body(body: &Map<String, Value>) -> Result<(Vec<String>, String), ApiError> {
    crate::body::only_fields(body, &["entity_ids", "parameters"])?;
    Ok((entity_ids(body)?, parameters(body)?))
}

/// An `actor` field may only repeat the authenticated subject: the actor recorded anywhere
/// is who authenticated, and a body cannot set or override it.
pub fn check_actor(body: &Map<String, Value>, caller: &Caller) -> Result<(), ApiError> {
    match optional_text(body, "actor")? {
        Some(actor) if actor != caller.subject => Err(ApiError::new(
            400,
            "actor_mismatch",
            format!(
                "`actor` is `{actor}` but you are authenticated as `{}`; the actor is always the authenticated subject (omit the field)",
                caller.subject
            ),
        )),
        _ => Ok(()),
    }
}

/// An undo's body: nothing, or the caller as `actor`.
pub fn undo_body(body: &Map<String, Value>, caller: &Caller) -> Result<(), ApiError> {
    crate::body::only_fields(body, &["actor"])?;
    check_actor(body, caller)
}

/// An execute request; `stream` says whether the caller asked for SSE in the body.
pub fn execute_body(
    entity_type: &str,
    action_name: &str,
    body: &Map<String, Value>,
    idempotency_header: Option<String>,
    caller: &Caller,
) -> Result<(ExecutionRequest, bool), ApiError> {
    crate::body::only_fields(body, EXECUTE_FIELDS)?;
    check_actor(body, caller)?;
    let options = match body.get("options") {
        None | Some(Value::Null) => None,
        Some(Value::Object(o)) => Some(options(o)?),
        Some(_) => return Err(ApiError::bad_request("`options` must be an object")),
    };
    let request = ExecutionRequest {
        entity_type: entity_type.into(),
        action_name: action_name.into(),
        entity_ids: entity_ids(body)?,
        parameters: parameters(body)?,
        idempotency_key: idempotency_key(body, idempotency_header)?,
        approval_token: optional_text(body, "approval_token")?,
        caller: caller.clone(),
        options,
    };
    let stream = match body.get("stream") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(ApiError::bad_request("`stream` must be a boolean")),
    };
    Ok((request, stream))
}

fn entity_ids(body: &Map<String, Value>) -> Result<Vec<String>, ApiError> {
    match body.get("entity_ids") {
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_str().map(str::to_string).ok_or_else(|| {
                    ApiError::bad_request(format!("`entity_ids` must hold strings, got {v}"))
                })
            })
            .collect(),
        None | Some(Value::Null) => Err(ApiError::bad_request("`entity_ids` is required")),
        Some(other) => Err(ApiError::bad_request(format!(
            "`entity_ids` must be an array of strings, got {other}"
        ))),
    }
}

fn parameters(body: &Map<String, Value>) -> Result<String, ApiError> {
    match body.get("parameters") {
        None | Some(Value::Null) => Ok("{}".into()),
        Some(p @ Value::Object(_)) => Ok(p.to_string()),
        Some(_) => Err(ApiError::bad_request("`parameters` must be an object")),
    }
}

/// The body's `idempotency_key` or the `Idempotency-Key` header. Both given and
/// different is a 400: the one not used would otherwise go unchecked, and the client
/// cannot know which of the two its retry is keyed on.
fn idempotency_key(
    body: &Map<String, Value>,
    header: Option<String>,
) -> Result<Option<String>, ApiError> {
    match (optional_text(body, "idempotency_key")?, header) {
        (Some(key), Some(header)) if key != header => Err(ApiError::bad_request(
            "`idempotency_key` and the Idempotency-Key header differ; send one, or the same in both",
        )),
        (Some(key), _) => Ok(Some(key)),
        (None, header) => Ok(header),
    }
}

fn optional_text(body: &Map<String, Value>, name: &str) -> Result<Option<String>, ApiError> {
    match body.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(ApiError::bad_request(format!("`{name}` must be a string"))),
    }
}

fn options(o: &Map<String, Value>) -> Result<BatchOptions, ApiError> {
    let fields = [
        "max_concurrent",
        "chunk_size",
        "chunk_timeout_ms",
        "max_retries",
    ];
    if let Some(unknown) = o.keys().find(|k| !fields.contains(&k.as_str())) {
        return Err(ApiError::bad_request(format!(
            "unknown option `{unknown}` (allowed: {})",
            fields.join(", ")
        )));
    }
    let number = |name: &str, default: u32| -> Result<u32, ApiError> {
        match o.get(name) {
            None | Some(Value::Null) => Ok(default),
            Some(v) => crate::body::whole_number(v)
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| {
                    ApiError::bad_request(format!(
                        "`options.{name}` must be a non-negative integer, got {v}"
                    ))
                }),
        }
    };
    Ok(BatchOptions {
        max_concurrent: number("max_concurrent", 10)?,
        chunk_size: number("chunk_size", 50)?,
        chunk_timeout_ms: number("chunk_timeout_ms", 30_000)?,
        max_retries: number("max_retries", 2)?,
    })
}

/// A JSON-in-text value from a component as JSON (text that is not JSON stays text).
fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string()))
}

fn change_json(c: &PropertyChange) -> Value {
    json!({
        "entity_id": c.entity_id,
        "property": c.property,
        "before": c.before.as_deref().map_or(Value::Null, parse),
        "after": c.after.as_deref().map_or(Value::Null, parse),
    })
}

fn reason(r: FailureReason) -> &'static str {
    match r {
        FailureReason::PreconditionFailed => "precondition_failed",
        FailureReason::NotFound => "not_found",
        FailureReason::Conflict => "conflict",
        FailureReason::Timeout => "timeout",
        FailureReason::Cancelled => "cancelled",
        FailureReason::Error => "error",
        FailureReason::Unknown => "unknown",
        FailureReason::NotAttempted => "not_attempted",
    }
}

pub fn outcome_json(o: &EntityOutcome) -> Value {
    let mut v = json!({
        "entity_id": o.entity_id,
        "success": o.success,
        "log_id": o.log_id,
        "replayed": o.replayed,
    });
    if o.success {
        v["changes"] = o.changes.iter().map(change_json).collect();
    }
    // A replay tells the current truth: the change it recorded was undone since.
    if let Some(undo) = &o.undone {
        v["undone"] = json!(true);
        v["undone_by"] = json!(undo.actor);
        v["undone_at"] = json!(undo.at);
        v["undo_log_id"] = json!(undo.log_id);
    }
    if let Some(f) = &o.failure {
        v["error"] = json!(f.message);
        v["reason"] = json!(reason(f.reason));
        v["precondition"] = json!(f.precondition);
    }
    v
}

/// Seed 000 §6.1 `ActionResultSummary`, plus the action and timing.
pub fn summary_json(s: &BatchSummary) -> Value {
    json!({
        "entity_type": s.entity_type,
        "action_name": s.action_name,
        "total": s.total,
        "succeeded": s.succeeded,
        "failed": s.failed,
        "unknown": s.unknown,
        "successes": s.successes.iter().map(outcome_json).collect::<Vec<_>>(),
        "failures": s.failures.iter().map(outcome_json).collect::<Vec<_>>(),
        "duration_ms": s.duration_ms,
    })
}

pub fn action_summary_json(a: &ActionSummary) -> Value {
    json!({
        "entity_type": a.entity_type,
        "name": a.name,
        "description": a.description,
        "requires_approval": a.requires_approval,
    })
}

pub fn action_spec_json(a: &ActionSpec) -> Value {
    json!({
        "entity_type": a.entity_type,
        "name": a.name,
        "description": a.description,
        "requires_approval": a.requires_approval,
        "parameters": a.parameters.iter().map(|p| json!({
            "name": p.name,
            "type": p.value_type,
            "description": p.description,
            "required": p.required,
            "default": p.default_value.as_deref().map(parse),
            "minimum": p.minimum,
            "maximum": p.maximum,
            "allowed_values": p.allowed_values,
        })).collect::<Vec<_>>(),
        "preconditions": a.preconditions.iter().map(|p| json!({
            "name": p.name,
            "check": p.expression,
            "message": p.failure_message,
        })).collect::<Vec<_>>(),
        "effects": a.effects.iter().map(|e| json!(e.expression)).collect::<Vec<_>>(),
    })
}

pub fn validation_json(v: &Validation) -> Value {
    json!({
        "entity_id": v.entity_id,
        "found": v.found,
        "can_execute": v.can_execute,
        "checks": v.checks.iter().map(|c| json!({
            "name": c.name,
            "passed": c.passed,
            "message": c.message,
        })).collect::<Vec<_>>(),
    })
}

pub fn log_page_json(page: &LogPage) -> Value {
    json!({
        "entries": page.entries.iter().map(|e| json!({
            "id": e.id,
            "entity_type": e.entity_type,
            "action_name": e.action_name,
            "entity_id": e.entity_id,
            "parameters": parse(&e.parameters),
            "changes": e.changes.iter().map(change_json).collect::<Vec<_>>(),
            "idempotency_key": e.idempotency_key,
            "actor": e.actor,
            "at": e.at,
            "undone_by": e.undone_by,
        })).collect::<Vec<_>>(),
        "next_cursor": page.next_cursor,
    })
}

/// The `action_plan` event of a direct batch request.
pub fn request_plan_json(request: &ExecutionRequest, total: u32) -> Value {
    json!({
        "actor": request.caller.subject,
        "plan": plan_json(
            &request.entity_type,
            &request.action_name,
            &request.entity_ids,
            total as usize,
            parse(&request.parameters),
        )
    })
}

/// The answer of `POST /actions/{type}/{name}/plan`.
pub fn plan_decision_json(entity_type: &str, action_name: &str, d: &PlanDecision) -> Value {
    json!({
        "approval_required": d.approval_required,
        "reason": d.reason,
        "approval_token": d.approval_token,
        "expires_at": d.expires_at,
        "plan": {
            "entity_type": entity_type,
            "action_name": action_name,
            "entity_ids": d.entity_ids,
            "total": d.entity_ids.len(),
            "parameters": parse(&d.parameters),
            "plan_hash": d.plan_hash,
        },
    })
}

/// An approval as answers show it (never the token: only who holds it knows it).
pub fn approval_json(a: &ApprovalInfo) -> Value {
    json!({
        "entity_type": a.entity_type,
        "action_name": a.action_name,
        "entity_ids": a.entity_ids,
        "parameters": parse(&a.parameters),
        "plan_hash": a.plan_hash,
        "requested_by": a.requested_by,
        "state": a.state,
        "reason": a.reason,
        "four_eyes": a.four_eyes,
        "created_at": a.created_at,
        "expires_at": a.expires_at,
        "decided_by": a.decided_by,
        "decided_at": a.decided_at,
    })
}

/// An action plan as events and answers show it (seed 000 §6.1 `ActionPlan`).
pub fn plan_json(
    entity_type: &str,
    action_name: &str,
    entity_ids: &[String],
    target_count: usize,
    parameters: Value,
) -> Value {
    json!({
        "entity_type": entity_type,
        "action_name": action_name,
        "target_count": target_count,
        "targets": entity_ids.iter().map(|id| json!({"entity_id": id})).collect::<Vec<_>>(),
        "parameters": parameters,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    fn ann() -> Caller {
        Caller {
            subject: "ann".into(),
            roles: vec!["operator".into()],
        }
    }

    #[test]
    fn the_actor_is_the_caller() {
        let ok = json!({"entity_ids": ["PO-1"], "actor": "ann"});
        let (r, _) = execute_body("T", "a", &body(ok), None, &ann()).unwrap();
        assert_eq!(r.caller.subject, "ann");
        let bad = json!({"entity_ids": ["PO-1"], "actor": "bob"});
        let e = execute_body("T", "a", &body(bad), None, &ann()).unwrap_err();
        assert_eq!((e.status, e.code.as_str()), (400, "actor_mismatch"));
        let e = undo_body(&body(json!({"actor": "ann", "reason": "x"})), &ann()).unwrap_err();
        assert_eq!(e.message, "unknown field `reason` (allowed: actor)");
        assert!(undo_body(&body(json!({"actor": "ann"})), &ann()).is_ok());
        assert!(undo_body(&body(json!({})), &ann()).is_ok());
    }

    #[test]
    fn execute_bodies_are_checked_field_by_field() {
        let (r, stream) = execute_body(
            "PurchaseOrder",
            "makePayment",
            &body(json!({"entity_ids": ["PO-1"], "options": {"chunk_size": 5}, "stream": true})),
            Some("hdr".into()),
            &ann(),
        )
        .unwrap();
        assert!(stream);
        assert_eq!(r.idempotency_key.as_deref(), Some("hdr"));
        assert_eq!(r.options.unwrap().chunk_size, 5);
        let whole = json!({"entity_ids": ["PO-1"], "options": {"max_concurrent": 41.0}});
        let (r, _) = execute_body("T", "a", &body(whole), None, &ann()).unwrap();
        assert_eq!(r.options.unwrap().max_concurrent, 41);
        let fraction = json!({"entity_ids": ["PO-1"], "options": {"max_concurrent": 4.5}});
        assert!(execute_body("T", "a", &body(fraction), None, &ann()).is_err());
        let same = json!({"entity_ids": ["PO-1"], "idempotency_key": "k"});
        let (r, _) = execute_body("T", "a", &body(same.clone()), Some("k".into()), &ann()).unwrap();
        assert_eq!(r.idempotency_key.as_deref(), Some("k"));
        let e = execute_body("T", "a", &body(same), Some("other".into()), &ann()).unwrap_err();
        assert!(e.message.contains("differ"), "{}", e.message);
        assert_eq!(r.parameters, "{}");
        for (bad, field) in [
            (json!({}), "`entity_ids` is required"),
            (
                json!({"entity_ids": "PO-1"}),
                "`entity_ids` must be an array",
            ),
            (json!({"entity_ids": [1]}), "`entity_ids` must hold strings"),
            (
                json!({"entity_ids": [], "parameters": []}),
                "`parameters` must be an object",
            ),
            (
                json!({"entity_ids": [], "options": {"chunk_size": -1}}),
                "`options.chunk_size`",
            ),
            (
                json!({"entity_ids": [], "options": {"speed": 1}}),
                "unknown option `speed`",
            ),
            (json!({"entity_ids": [], "ids": []}), "unknown field `ids`"),
        ] {
            let e = execute_body("T", "a", &body(bad), None, &ann()).unwrap_err();
            assert!(e.message.contains(field), "{} vs {field}", e.message);
            assert_eq!(e.status, 400);
        }
    }

    #[test]
    fn summaries_keep_values_as_json() {
        let s = BatchSummary {
            entity_type: "PurchaseOrder".into(),
            action_name: "makePayment".into(),
            total: 2,
            succeeded: 1,
            failed: 1,
            unknown: 0,
            successes: vec![EntityOutcome {
                entity_id: "PO-1".into(),
                success: true,
                changes: vec![PropertyChange {
                    entity_id: "ACC".into(),
                    property: "balance".into(),
                    before: Some("100.0".into()),
                    after: Some("90.5".into()),
                }],
                failure: None,
                log_id: Some("L-1".into()),
                replayed: false,
                undone: None,
            }],
            failures: vec![EntityOutcome {
                entity_id: "PO-2".into(),
                success: false,
                changes: vec![],
                failure: Some(kg_wit::types::Failure {
                    reason: FailureReason::PreconditionFailed,
                    message: "Insufficient funds".into(),
                    precondition: Some("sufficient_funds".into()),
                }),
                log_id: None,
                replayed: false,
                undone: None,
            }],
            duration_ms: 3,
        };
        let j = summary_json(&s);
        assert_eq!(j["successes"][0]["changes"][0]["after"], 90.5);
        assert_eq!(j["failures"][0]["error"], "Insufficient funds");
        assert_eq!(j["failures"][0]["reason"], "precondition_failed");
    }
}
