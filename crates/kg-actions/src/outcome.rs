//! Reading the rows of an action's statements into per-entity outcomes and validations.

use crate::statement::ActionPlan;
use kg_wit::types::{EntityOutcome, Failure, FailureReason, PropertyChange};
use neo4j_client::{QueryResult, Value};
use std::collections::BTreeMap;

/// A check's result in a dry run.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckResult {
    pub name: String,
    pub passed: bool,
    pub message: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Validation {
    pub entity_id: String,
    pub found: bool,
    pub can_execute: bool,
    pub checks: Vec<CheckResult>,
}

/// An execution row that reported a prior execution under the same key: its outcome is
/// the recorded one, read separately (see `log::changes_statement`).
#[derive(Debug, Clone, PartialEq)]
pub struct Replay {
    pub entity_id: String,
    pub log_id: String,
}

pub enum RowOutcome {
    Done(EntityOutcome),
    Replayed(Replay),
    /// The statement started after its `not_after`: nothing was applied for this entity.
    Expired(String),
}

fn field<'a>(row: &'a BTreeMap<String, Value>, name: &str) -> &'a Value {
    static NULL: Value = Value::Null;
    row.get(name).unwrap_or(&NULL)
}

fn bools(v: &Value) -> Vec<bool> {
    match v {
        Value::List(items) => items
            .iter()
            .map(|b| matches!(b, Value::Boolean(true)))
            .collect(),
        _ => Vec::new(),
    }
}

fn text(v: &Value) -> Option<String> {
    v.as_str().map(str::to_string)
}

pub fn validations(plan: &ActionPlan, result: &QueryResult) -> Vec<Validation> {
    result
        .rows_as_maps()
        .iter()
        .map(|row| {
            let found = matches!(field(row, "found"), Value::Boolean(true));
            let id = text(field(row, "id")).unwrap_or_default();
            if !found {
                // Its preconditions do not apply to an entity that is not there.
                return missing(plan, &id);
            }
            let passed = bools(field(row, "checks"));
            let checks: Vec<CheckResult> = plan
                .checks
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let ok = passed.get(i).copied().unwrap_or(false);
                    CheckResult {
                        name: c.name.clone(),
                        passed: ok,
                        message: (!ok).then(|| c.message.clone()),
                    }
                })
                .collect();
            Validation {
                entity_id: id,
                found,
                can_execute: checks.iter().all(|c| c.passed),
                checks,
            }
        })
        .collect()
}

/// The validation of an id no entity of the action's type has: one failed `exists` check
/// saying so, instead of preconditions that cannot apply.
pub fn missing(plan: &ActionPlan, id: &str) -> Validation {
    Validation {
        entity_id: id.to_string(),
        found: false,
        can_execute: false,
        checks: vec![CheckResult {
            name: "exists".into(),
            passed: false,
            message: Some(not_found(plan, id).message),
        }],
    }
}

pub fn not_found(plan: &ActionPlan, id: &str) -> Failure {
    Failure {
        reason: FailureReason::NotFound,
        message: format!("{} `{id}` not found", plan.entity.label),
        precondition: None,
    }
}

pub fn failed(id: &str, failure: Failure) -> EntityOutcome {
    EntityOutcome {
        entity_id: id.to_string(),
        success: false,
        changes: Vec::new(),
        failure: Some(failure),
        log_id: None,
        replayed: false,
        undone: None,
    }
}

/// The outcomes of one executed chunk, one per row.
pub fn executions(plan: &ActionPlan, result: &QueryResult) -> Vec<RowOutcome> {
    result
        .rows_as_maps()
        .iter()
        .map(|row| {
            let id = text(field(row, "id")).unwrap_or_default();
            if let Some(log_id) = text(field(row, "prior_log")) {
                return RowOutcome::Replayed(Replay {
                    entity_id: id,
                    log_id,
                });
            }
            if matches!(field(row, "expired"), Value::Boolean(true)) {
                return RowOutcome::Expired(id);
            }
            if !matches!(field(row, "found"), Value::Boolean(true)) {
                return RowOutcome::Done(failed(&id, not_found(plan, &id)));
            }
            if matches!(field(row, "ok"), Value::Boolean(true)) {
                let list = |name| match field(row, name) {
                    Value::List(items) => items.clone(),
                    _ => Vec::new(),
                };
                let (before, after, keys) = (list("before"), list("after"), list("keys"));
                let changes = plan
                    .changes
                    .iter()
                    .enumerate()
                    .map(|(i, c)| PropertyChange {
                        entity_id: keys.get(i).and_then(text).unwrap_or_default(),
                        property: c.property.clone(),
                        before: json_of(before.get(i)),
                        after: json_of(after.get(i)),
                    })
                    .collect();
                return RowOutcome::Done(EntityOutcome {
                    entity_id: id,
                    success: true,
                    changes,
                    failure: None,
                    log_id: text(field(row, "log_id")),
                    replayed: false,
                    undone: None,
                });
            }
            let passed = bools(field(row, "checks"));
            let first_failed = plan
                .checks
                .iter()
                .enumerate()
                .find(|(i, _)| !passed.get(*i).copied().unwrap_or(false));
            let failure = match first_failed {
                Some((_, check)) => Failure {
                    reason: FailureReason::PreconditionFailed,
                    message: check.message.clone(),
                    precondition: Some(check.name.clone()),
                },
                None => Failure {
                    reason: FailureReason::Conflict,
                    message: "the entity changed while the action ran".into(),
                    precondition: None,
                },
            };
            RowOutcome::Done(failed(&id, failure))
        })
        .collect()
}

/// A graph value as JSON text for a property change; `None` for null (absent).
pub fn json_of(value: Option<&Value>) -> Option<String> {
    match value {
        None | Some(Value::Null) => None,
        Some(v) => Some(v.to_plain_json().to_string()),
    }
}
