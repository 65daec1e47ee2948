//! Plans and their approvals: whether a plan needs a person, issuing the token (recorded
//! in the graph by its hash), reading, rejecting, and redeeming it atomically.

use crate::access::{self, coded};
use crate::clock;
use kg_actions::approval::{self, NewApproval};
use kg_actions::catalog::ActionDef;
use kg_identity::Permission;
use kg_wit::types::{Caller, Error, ErrorCode};
use neo4j_client::AccessMode;
use serde_json::Value as Json;

use crate::exports::kg::action_executor::action_executor::{ApprovalInfo, PlanDecision};

/// Why the plan must wait for a person, if it must: the action requires approval, or the
/// batch is larger than `approval_batch_threshold`. The same rule for the agent and the
/// direct API.
pub fn reason(action: &ActionDef, distinct: usize) -> Option<String> {
    let threshold = kg_spin::number_variable("approval_batch_threshold", 50) as usize;
    if action.requires_approval {
        Some(format!(
            "{}.{} requires approval",
            action.entity, action.name
        ))
    } else if distinct > threshold {
        Some(format!(
            "the batch has {distinct} entities, more than the {threshold} that run without approval"
        ))
    } else {
        None
    }
}

/// Issues the approval of a checked plan; returns the token and its expiry (RFC 3339).
#[allow(clippy::too_many_arguments)]
pub fn issue(
    caller: &Caller,
    action: &ActionDef,
    ids: &[String],
    parameters: &Json,
    plan_hash: &str,
    conversation: Option<&str>,
    why: &str,
) -> Result<(String, String), Error> {
    let token = kg_spin::clock::secret_token("apv");
    let ttl_ms =
        kg_spin::number_variable("approval_ttl_s", 900).clamp(1, 7 * 24 * 3600) as i64 * 1000;
    let expires_ms = kg_spin::clock::epoch_ms() + ttl_ms;
    let expires_at = kg_spin::clock::rfc3339_of_ms(expires_ms);
    let id = approval::approval_id(&token);
    let statement = approval::create_statement(&NewApproval {
        id: &id,
        plan_hash,
        entity_type: &action.entity,
        action_name: &action.name,
        entity_ids: ids,
        parameters,
        requested_by: access::subject(caller)?,
        conversation,
        reason: why,
        four_eyes: action.four_eyes,
        now: &clock::now_rfc3339(),
        expires_at: &expires_at,
        expires_ms,
    });
    crate::client()?
        .run(&statement.text, statement.params, AccessMode::Write)
        .map_err(crate::graph_error)?;
    Ok((token, expires_at))
}

fn invalid_token() -> Error {
    coded(
        ErrorCode::Denied,
        "approval_invalid",
        "no approval was issued with this token (plan first: POST /actions/{type}/{name}/plan)"
            .into(),
        None,
    )
}

fn well_formed(token: &str) -> Result<(), Error> {
    let ok = token.len() <= 128
        && token.starts_with("apv_")
        && token[4..].chars().all(|c| c.is_ascii_hexdigit());
    if ok { Ok(()) } else { Err(invalid_token()) }
}

pub fn info(r: approval::ApprovalRecord) -> ApprovalInfo {
    ApprovalInfo {
        entity_type: r.entity_type,
        action_name: r.action_name,
        entity_ids: r.entity_ids,
        parameters: r.parameters,
        plan_hash: r.plan_hash,
        requested_by: r.requested_by,
        conversation: r.conversation,
        state: r.state,
        reason: r.reason,
        four_eyes: r.four_eyes,
        created_at: r.created_at,
        expires_at: r.expires_at,
        decided_by: r.decided_by,
        decided_at: r.decided_at,
        idempotency_key: r.idempotency_key,
    }
}

pub fn get(token: &str) -> Result<ApprovalInfo, Error> {
    well_formed(token)?;
    let statement = approval::get_statement(&approval::approval_id(token));
    let result = crate::client()?
        .run(&statement.text, statement.params, AccessMode::Read)
        .map_err(crate::graph_error)?;
    approval::record(&result)
        .map(info)
        .ok_or_else(invalid_token)
}

pub fn reject(caller: &Caller, token: &str) -> Result<ApprovalInfo, Error> {
    well_formed(token)?;
    let subject = access::subject(caller)?;
    let may_approve = kg_identity::allowed(&access::roles(caller), Permission::ActionsApprove);
    let statement = approval::reject_statement(
        &approval::approval_id(token),
        subject,
        may_approve,
        &clock::now_rfc3339(),
    );
    let result = crate::client()?
        .run(&statement.text, statement.params, AccessMode::Write)
        .map_err(crate::graph_error)?;
    let d = approval::decision(&result).ok_or_else(invalid_token)?;
    if d.ok {
        return Ok(info(d.record));
    }
    Err(match d.found.as_str() {
        "pending" => access::denied(kg_actions::access::Refusal {
            code: "forbidden",
            message: "only an approver or the requester can reject this plan".into(),
            permission: Some(Permission::ActionsApprove.as_str()),
        }),
        _ => {
            let (code, message) = approval::refusal(&d, &d.record.plan_hash, subject, 0);
            decided_error(code, message, &d.record)
        }
    })
}

fn decided_error(code: &str, message: String, r: &approval::ApprovalRecord) -> Error {
    let class = match code {
        "approval_used" | "approval_rejected" => ErrorCode::Conflict,
        _ => ErrorCode::Denied,
    };
    let detail = matches!(code, "approval_used" | "approval_rejected").then(|| {
        serde_json::json!({"first": {
            "state": r.state,
            "redeemed_by": r.decided_by,
            "redeemed_at": r.decided_at,
            "idempotency_key": r.idempotency_key,
        }})
    });
    coded(class, code, message, detail)
}

/// Redeems `token` for this exact plan, once, atomically in the graph. Returns the
/// idempotency key the execution must run under (bound to the approval, so a retry of
/// the redeemed request cannot run twice either).
pub fn redeem(caller: &Caller, token: &str, plan_hash: &str) -> Result<String, Error> {
    access::require(caller, Permission::ActionsApprove)?;
    well_formed(token)?;
    let subject = access::subject(caller)?;
    let id = approval::approval_id(token);
    let key = format!("approval-{}", &id[..32]);
    let now_ms = kg_spin::clock::epoch_ms();
    let statement =
        approval::claim_statement(&id, plan_hash, subject, &key, &clock::now_rfc3339(), now_ms);
    let result = crate::client()?
        .run(&statement.text, statement.params, AccessMode::Write)
        .map_err(crate::graph_error)?;
    let d = approval::decision(&result).ok_or_else(invalid_token)?;
    if d.ok {
        return Ok(key);
    }
    let (code, message) = approval::refusal(&d, plan_hash, subject, now_ms);
    Err(decided_error(code, message, &d.record))
}

/// The decision of `plan`: checks, then issues an approval when one is needed.
pub fn decide(
    caller: &Caller,
    action: &ActionDef,
    ids: &[String],
    parameters: &Json,
    conversation: Option<&str>,
) -> Result<PlanDecision, Error> {
    let plan_hash = approval::plan_hash(&action.entity, &action.name, ids, parameters);
    let why = reason(action, ids.len());
    let (token, expires_at) = match &why {
        Some(why) => {
            let (t, e) = issue(
                caller,
                action,
                ids,
                parameters,
                &plan_hash,
                conversation,
                why,
            )?;
            (Some(t), Some(e))
        }
        None => (None, None),
    };
    Ok(PlanDecision {
        plan_hash,
        entity_ids: ids.to_vec(),
        parameters: parameters.to_string(),
        approval_required: why.is_some(),
        reason: why,
        approval_token: token,
        expires_at,
    })
}
