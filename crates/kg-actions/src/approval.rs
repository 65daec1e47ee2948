//! Approvals recorded in the graph, where the effects are applied, so every instance of
//! the service sees one truth (DESIGN.md §9). A plan that needs a person's approval gets
//! an `:ActionApproval` node keyed by the SHA-256 of its token (the token itself is never
//! stored), bound to the plan hash, the conversation and the requesting subject, with an
//! expiry. Redeeming it is one WRITE statement that locks the node and only then reads
//! its state: of two concurrent redemptions on any number of instances, the second waits
//! for the first's lock and finds it `redeemed`.

use crate::statement::Statement;
use neo4j_client::{QueryResult, Value};
use serde_json::{Map, Value as Json, json};
use sha2::{Digest, Sha256};

const LABEL: &str = "`ActionApproval`";

/// Lowercase hex SHA-256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// What an approval is bound to: the action, the distinct ids in sorted order and the
/// resolved parameters (keys sorted at every depth), hashed. Order and duplicates of the
/// ids do not change the plan; any other difference does.
pub fn plan_hash(
    entity_type: &str,
    action_name: &str,
    ids: &[String],
    parameters: &Json,
) -> String {
    let mut ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    ids.sort_unstable();
    ids.dedup();
    let canonical = json!([entity_type, action_name, ids, canonical(parameters)]);
    sha256_hex(canonical.to_string().as_bytes())
}

/// `value` with object keys sorted at every depth (whatever map order serde_json uses).
fn canonical(value: &Json) -> Json {
    match value {
        Json::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Json::Array(
                keys.into_iter()
                    .map(|k| json!([k, canonical(&map[k])]))
                    .collect(),
            )
        }
        Json::Array(items) => Json::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

/// The graph id of a token: its hash, so reading the graph never reveals a usable token.
pub fn approval_id(token: &str) -> String {
    sha256_hex(token.as_bytes())
}

/// An approval to record.
#[derive(Debug, Clone, PartialEq)]
pub struct NewApproval<'a> {
    pub id: &'a str,
    pub plan_hash: &'a str,
    pub entity_type: &'a str,
    pub action_name: &'a str,
    pub entity_ids: &'a [String],
    pub parameters: &'a Json,
    pub requested_by: &'a str,
    pub conversation: Option<&'a str>,
    pub reason: &'a str,
    pub four_eyes: bool,
    pub now: &'a str,
    pub expires_at: &'a str,
    pub expires_ms: i64,
}

pub fn create_statement(a: &NewApproval) -> Statement {
    let text = format!(
        "CREATE (a:{LABEL} {{`id`: $id, `plan_hash`: $plan_hash, `entity_type`: $entity_type, \
         `action_name`: $action_name, `entity_ids`: $entity_ids, `parameters`: $parameters, \
         `requested_by`: $requested_by, `conversation`: $conversation, `reason`: $reason, \
         `four_eyes`: $four_eyes, `created_at`: $now, `expires_at`: $expires_at, \
         `expires_ms`: $expires_ms, `state`: 'pending'}})\nRETURN a.`id` AS id"
    );
    let mut params = Map::new();
    params.insert("id".into(), json!(a.id));
    params.insert("plan_hash".into(), json!(a.plan_hash));
    params.insert("entity_type".into(), json!(a.entity_type));
    params.insert("action_name".into(), json!(a.action_name));
    params.insert("entity_ids".into(), json!(a.entity_ids));
    params.insert("parameters".into(), json!(a.parameters.to_string()));
    params.insert("requested_by".into(), json!(a.requested_by));
    params.insert("conversation".into(), json!(a.conversation));
    params.insert("reason".into(), json!(a.reason));
    params.insert("four_eyes".into(), json!(a.four_eyes));
    params.insert("now".into(), json!(a.now));
    params.insert("expires_at".into(), json!(a.expires_at));
    params.insert("expires_ms".into(), json!(a.expires_ms));
    Statement { text, params }
}

const FIELDS: &str = "a.`entity_type` AS entity_type, a.`action_name` AS action_name, \
     a.`entity_ids` AS entity_ids, a.`parameters` AS parameters, a.`plan_hash` AS plan_hash, \
     a.`requested_by` AS requested_by, a.`conversation` AS conversation, a.`state` AS state, \
     a.`reason` AS reason, a.`four_eyes` AS four_eyes, a.`created_at` AS created_at, \
     a.`expires_at` AS expires_at, a.`expires_ms` AS expires_ms, a.`decided_by` AS decided_by, \
     a.`decided_at` AS decided_at, a.`idempotency_key` AS idempotency_key";

pub fn get_statement(id: &str) -> Statement {
    let mut params = Map::new();
    params.insert("id".into(), json!(id));
    Statement {
        text: format!("MATCH (a:{LABEL} {{`id`: $id}})\nRETURN {FIELDS}"),
        params,
    }
}

/// Locks the approval, then reads it (the aggregation is the barrier: every row has taken
/// its lock before any property is read), and moves it from `pending` to `state` only when
/// `condition` holds. Returns `ok`, the state found under the lock, and every field.
fn decide_statement(
    id: &str,
    condition: &str,
    state: &str,
    extra_sets: &str,
    mut params: Map<String, Json>,
) -> Statement {
    let lock = crate::expr::quote(crate::catalog::LOCK_PROPERTY);
    let text = format!(
        "MATCH (a:{LABEL} {{`id`: $id}})\n\
         FOREACH (n IN [a] | SET n.{lock} = true REMOVE n.{lock})\n\
         WITH a, count(*) AS locked\n\
         WITH a, a.`state` AS found, (a.`state` = 'pending' AND {condition}) AS ok\n\
         FOREACH (_ IN CASE WHEN ok THEN [1] ELSE [] END |\n  \
         SET a.`state` = '{state}', a.`decided_by` = $subject, a.`decided_at` = $now{extra_sets}\n)\n\
         RETURN ok, found, {FIELDS}"
    );
    params.insert("id".into(), json!(id));
    Statement { text, params }
}

/// The redemption: only a pending, unexpired approval of the same plan, and (four-eyes)
/// only by another subject than the requester, becomes `redeemed` — once.
pub fn claim_statement(
    id: &str,
    plan_hash: &str,
    subject: &str,
    idempotency_key: &str,
    now: &str,
    now_ms: i64,
) -> Statement {
    let mut params = Map::new();
    params.insert("plan_hash".into(), json!(plan_hash));
    params.insert("subject".into(), json!(subject));
    params.insert("key".into(), json!(idempotency_key));
    params.insert("now".into(), json!(now));
    params.insert("now_ms".into(), json!(now_ms));
    decide_statement(
        id,
        "a.`expires_ms` > $now_ms AND a.`plan_hash` = $plan_hash \
         AND (NOT a.`four_eyes` OR a.`requested_by` <> $subject)",
        "redeemed",
        ", a.`idempotency_key` = $key",
        params,
    )
}

/// A rejection, by an approver (`may_approve`) or the requester withdrawing the plan.
pub fn reject_statement(id: &str, subject: &str, may_approve: bool, now: &str) -> Statement {
    let mut params = Map::new();
    params.insert("subject".into(), json!(subject));
    params.insert("may_approve".into(), json!(may_approve));
    params.insert("now".into(), json!(now));
    decide_statement(
        id,
        "($may_approve OR a.`requested_by` = $subject)",
        "rejected",
        "",
        params,
    )
}

/// An approval as read back from the graph.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalRecord {
    pub entity_type: String,
    pub action_name: String,
    pub entity_ids: Vec<String>,
    pub parameters: String,
    pub plan_hash: String,
    pub requested_by: String,
    pub conversation: Option<String>,
    pub state: String,
    pub reason: String,
    pub four_eyes: bool,
    pub created_at: String,
    pub expires_at: String,
    pub expires_ms: i64,
    pub decided_by: Option<String>,
    pub decided_at: Option<String>,
    pub idempotency_key: Option<String>,
}

/// The outcome of a claim or rejection: whether this statement made the decision, the
/// state found under the lock, and the record as it is now.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub ok: bool,
    pub found: String,
    pub record: ApprovalRecord,
}

/// The first row's record; `None` when no approval has the id.
pub fn record(result: &QueryResult) -> Option<ApprovalRecord> {
    result.rows_as_maps().first().map(|row| {
        let text = |name: &str| row.get(name).and_then(Value::as_str).map(str::to_string);
        ApprovalRecord {
            entity_type: text("entity_type").unwrap_or_default(),
            action_name: text("action_name").unwrap_or_default(),
            entity_ids: match row.get("entity_ids") {
                Some(Value::List(items)) => items
                    .iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect(),
                _ => Vec::new(),
            },
            parameters: text("parameters").unwrap_or_else(|| "{}".into()),
            plan_hash: text("plan_hash").unwrap_or_default(),
            requested_by: text("requested_by").unwrap_or_default(),
            conversation: text("conversation"),
            state: text("state").unwrap_or_default(),
            reason: text("reason").unwrap_or_default(),
            four_eyes: matches!(row.get("four_eyes"), Some(Value::Boolean(true))),
            created_at: text("created_at").unwrap_or_default(),
            expires_at: text("expires_at").unwrap_or_default(),
            expires_ms: row.get("expires_ms").and_then(Value::as_i64).unwrap_or(0),
            decided_by: text("decided_by"),
            decided_at: text("decided_at"),
            idempotency_key: text("idempotency_key"),
        }
    })
}

/// The decision of a claim or rejection statement; `None` when no approval has the id.
pub fn decision(result: &QueryResult) -> Option<Decision> {
    let record = record(result)?;
    let row = result.rows_as_maps().into_iter().next()?;
    Some(Decision {
        ok: matches!(row.get("ok"), Some(Value::Boolean(true))),
        found: row
            .get("found")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        record,
    })
}

/// Why a claim that did not succeed failed, in the order a user should hear it:
/// `(api code, message)`. `now_ms` and the claimant tell expiry and four-eyes apart.
pub fn refusal(
    d: &Decision,
    plan_hash: &str,
    subject: &str,
    now_ms: i64,
) -> (&'static str, String) {
    let r = &d.record;
    match d.found.as_str() {
        "redeemed" => (
            "approval_used",
            format!(
                "this approval was already redeemed by `{}` at {}",
                r.decided_by.as_deref().unwrap_or("?"),
                r.decided_at.as_deref().unwrap_or("?")
            ),
        ),
        "rejected" => (
            "approval_rejected",
            format!(
                "this plan was rejected by `{}` at {}",
                r.decided_by.as_deref().unwrap_or("?"),
                r.decided_at.as_deref().unwrap_or("?")
            ),
        ),
        _ if r.expires_ms <= now_ms => (
            "approval_expired",
            format!("this approval expired at {}; plan again", r.expires_at),
        ),
        _ if r.plan_hash != plan_hash => (
            "approval_mismatch",
            "the request differs from the approved plan (ids or parameters); execute exactly the planned ids and parameters".into(),
        ),
        _ if r.four_eyes && r.requested_by == subject => (
            "four_eyes",
            format!(
                "{}.{} needs a second person: `{subject}` requested this plan and cannot approve it",
                r.entity_type, r.action_name
            ),
        ),
        _ => ("approval_invalid", "the approval could not be redeemed".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_hash_ignores_id_order_and_duplicates_and_key_order() {
        let ids = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let a = plan_hash(
            "PO",
            "pay",
            &ids(&["b", "a", "a"]),
            &json!({"x": 1, "y": {"q": 2, "p": 1}}),
        );
        let b = plan_hash(
            "PO",
            "pay",
            &ids(&["a", "b"]),
            &json!({"y": {"p": 1, "q": 2}, "x": 1}),
        );
        assert_eq!(a, b);
        assert_ne!(
            a,
            plan_hash(
                "PO",
                "pay",
                &ids(&["a"]),
                &json!({"x": 1, "y": {"q": 2, "p": 1}})
            )
        );
        assert_ne!(
            a,
            plan_hash(
                "PO",
                "pay",
                &ids(&["a", "b"]),
                &json!({"x": 2, "y": {"q": 2, "p": 1}})
            )
        );
        assert_ne!(
            a,
            plan_hash(
                "PO",
                "cancel",
                &ids(&["a", "b"]),
                &json!({"x": 1, "y": {"q": 2, "p": 1}})
            )
        );
        assert_eq!(a.len(), 64);
    }

    #[test]
    fn statements_take_values_as_parameters_only() {
        let claim = claim_statement("id' OR 1=1", "h", "eve'", "k", "now", 5);
        assert!(!claim.text.contains("eve'") && !claim.text.contains("1=1"));
        assert_eq!(claim.params["subject"], json!("eve'"));
        // The lock comes before the first read of the state, with a barrier between.
        let lock = claim.text.find("SET n.`_kg_lock`").unwrap();
        let barrier = claim.text.find("count(*)").unwrap();
        let read = claim.text.find("a.`state` AS found").unwrap();
        assert!(lock < barrier && barrier < read, "{}", claim.text);
        let reject = reject_statement("i", "bob", false, "now");
        assert_eq!(reject.params["may_approve"], json!(false));
    }

    fn decision(found: &str, four_eyes: bool, requested_by: &str, expires_ms: i64) -> Decision {
        Decision {
            ok: false,
            found: found.into(),
            record: ApprovalRecord {
                entity_type: "PO".into(),
                action_name: "cancel".into(),
                entity_ids: vec![],
                parameters: "{}".into(),
                plan_hash: "h".into(),
                requested_by: requested_by.into(),
                conversation: None,
                state: found.into(),
                reason: String::new(),
                four_eyes,
                created_at: String::new(),
                expires_at: "then".into(),
                expires_ms,
                decided_by: Some("ann".into()),
                decided_at: Some("t".into()),
                idempotency_key: Some("k".into()),
            },
        }
    }

    #[test]
    fn refusals_say_why_in_order() {
        assert_eq!(
            refusal(&decision("redeemed", false, "x", 0), "h", "y", 1).0,
            "approval_used"
        );
        assert_eq!(
            refusal(&decision("rejected", false, "x", 9), "h", "y", 1).0,
            "approval_rejected"
        );
        assert_eq!(
            refusal(&decision("pending", false, "x", 1), "h", "y", 1).0,
            "approval_expired"
        );
        assert_eq!(
            refusal(&decision("pending", false, "x", 9), "other", "y", 1).0,
            "approval_mismatch"
        );
        assert_eq!(
            refusal(&decision("pending", true, "y", 9), "h", "y", 1).0,
            "four_eyes"
        );
    }
}
