//! The action log: reading recorded changes (for replays and history), paging, and the
//! undo statement that reverts an entry only when the entity has not changed since.

use crate::catalog::Catalog;
use crate::expr::quote;
use crate::outcome::json_of;
use crate::statement::{Statement, lock_in_order};
use kg_wit::types::{EntityOutcome, Failure, FailureReason, PropertyChange, UndoInfo};
use neo4j_client::{QueryResult, Value};
use serde_json::{Map, Value as Json, json};

/// One recorded change of a log entry, as stored on its `CHANGED` relationship.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedChange {
    pub seq: i64,
    pub entity_id: String,
    pub property: String,
    pub before: Option<String>,
    pub after: Option<String>,
    pub delta: bool,
}

impl RecordedChange {
    pub fn to_wit(&self) -> PropertyChange {
        PropertyChange {
            entity_id: self.entity_id.clone(),
            property: self.property.clone(),
            before: self.before.clone(),
            after: self.after.clone(),
        }
    }
}

/// A log entry as read back.
#[derive(Debug, Clone, PartialEq)]
pub struct LogRecord {
    pub id: String,
    pub entity_type: String,
    pub action_name: String,
    pub entity_id: String,
    pub parameters: String,
    pub idempotency_key: String,
    pub actor: Option<String>,
    pub at: String,
    pub undone_by: Option<String>,
    /// Who ran the undo recorded in `undone_by`, and when (RFC 3339).
    pub undone_actor: Option<String>,
    pub undone_at: Option<String>,
    pub changes: Vec<RecordedChange>,
}

impl LogRecord {
    /// The undo of this entry, if it was undone.
    pub fn undo_info(&self) -> Option<UndoInfo> {
        self.undone_by.as_ref().map(|id| UndoInfo {
            log_id: id.clone(),
            actor: self.undone_actor.clone(),
            at: self.undone_at.clone().unwrap_or_default(),
        })
    }

    /// The success this entry records, as the outcome of its entity: `replayed` when it
    /// answers a repeated request; with the undo, when there was one, because a replay
    /// tells the current truth. A replay of an entry undone since is a failure
    /// (`conflict`): what the key asked for does not stand, nothing ran now, and the
    /// message says how to run it again (a new idempotency key) — answering `success`
    /// would tell a client its order is paid when it is not.
    pub fn applied_outcome(&self, replayed: bool) -> EntityOutcome {
        if replayed && let Some(undo) = self.undo_info() {
            return EntityOutcome {
                entity_id: self.entity_id.clone(),
                success: false,
                changes: Vec::new(),
                failure: Some(Failure {
                    reason: FailureReason::Conflict,
                    message: format!(
                        "{}.{} ran on {} under this idempotency key (log {}) and was undone{}{} (log {}): nothing ran now; to run it again, send a new idempotency_key",
                        self.entity_type,
                        self.action_name,
                        self.entity_id,
                        self.id,
                        undo.actor
                            .as_deref()
                            .map(|a| format!(" by {a}"))
                            .unwrap_or_default(),
                        if undo.at.is_empty() {
                            String::new()
                        } else {
                            format!(" at {}", undo.at)
                        },
                        undo.log_id,
                    ),
                    precondition: None,
                }),
                log_id: Some(self.id.clone()),
                replayed,
                undone: Some(undo),
            };
        }
        EntityOutcome {
            entity_id: self.entity_id.clone(),
            success: true,
            changes: self.changes.iter().map(RecordedChange::to_wit).collect(),
            failure: None,
            log_id: Some(self.id.clone()),
            replayed,
            undone: self.undo_info(),
        }
    }
}

const RETURN_ENTRY: &str = "RETURN log.`id` AS id, log.`entity_type` AS entity_type, \
     log.`action_name` AS action_name, log.`entity_id` AS entity_id, log.`parameters` AS parameters, \
     log.`idempotency_key` AS idempotency_key, log.`actor` AS actor, log.`at` AS at, \
     log.`undone_by` AS undone_by, undo.`actor` AS undone_actor, undo.`at` AS undone_at, \
     [c IN changes WHERE c IS NOT NULL | [c.`seq`, c.`entity_id`, c.`property`, c.`before`, c.`after`, c.`delta`]] AS changes";

/// The undo entry of `log`, if any (at most one: an undo requires `undone_by` unset).
const WITH_UNDO: &str = "OPTIONAL MATCH (u:`ActionLog`)-[:`UNDOES`]->(log)\n\
     WITH log, changes, head(collect(u)) AS undo\n";

/// READ: the entries recorded under these execution keys (one per entity and
/// idempotency key; see `statement::execution_key`), to settle unanswered attempts.
pub fn executions_statement(execution_keys: &[String]) -> Statement {
    let mut params = Map::new();
    params.insert("keys".into(), json!(execution_keys));
    params.insert("limit".into(), json!(execution_keys.len()));
    Statement {
        text: format!(
            "MATCH (log:`ActionLog`) WHERE log.`execution_key` IN $keys\n\
             OPTIONAL MATCH (log)-[c:`CHANGED`]->()\n\
             WITH log, collect(c) AS changes\n{WITH_UNDO}{RETURN_ENTRY}\nLIMIT $limit"
        ),
        params,
    }
}

/// READ: the entries with these ids and their changes.
pub fn entries_statement(log_ids: &[String]) -> Statement {
    let mut params = Map::new();
    params.insert("ids".into(), json!(log_ids));
    params.insert("limit".into(), json!(log_ids.len()));
    Statement {
        text: format!(
            "MATCH (log:`ActionLog`) WHERE log.`id` IN $ids\n\
             OPTIONAL MATCH (log)-[c:`CHANGED`]->()\n\
             WITH log, collect(c) AS changes\n{WITH_UNDO}{RETURN_ENTRY}\nLIMIT $limit"
        ),
        params,
    }
}

/// READ: a page of entries, newest first; `cursor` is the last entry of the previous page.
/// The page is read from the `at` index in descending order from the cursor on (set-up
/// creates it: [`log_at_index_statement`]), so a page costs its own entries, not the
/// whole log: the first page names no cursor at all (an `OR NOT $has_cursor` would keep
/// the planner from using the index), and a later one is a range seek up to its `at`.
pub fn page_statement(cursor: Option<(&str, &str)>, limit: u32) -> Statement {
    let mut params = Map::new();
    let range = match cursor {
        Some((at, id)) => {
            params.insert("at".into(), json!(at));
            params.insert("id".into(), json!(id));
            "log.`at` <= $at AND (log.`at` < $at OR log.`id` < $id)"
        }
        None => "log.`at` IS NOT NULL",
    };
    params.insert("limit".into(), json!(limit + 1));
    Statement {
        text: format!(
            "MATCH (log:`ActionLog`)\n\
             WHERE {range}\n\
             WITH log ORDER BY log.`at` DESC, log.`id` DESC LIMIT $limit\n\
             OPTIONAL MATCH (log)-[c:`CHANGED`]->()\n\
             WITH log, collect(c) AS changes\n{WITH_UNDO}{RETURN_ENTRY}\n\
             ORDER BY at DESC, id DESC"
        ),
        params,
    }
}

/// The range index the log's pages read in order (idempotent; run by set-up).
pub fn log_at_index_statement() -> String {
    "CREATE INDEX `kg_actionlog_at` IF NOT EXISTS FOR (n:`ActionLog`) ON (n.`at`)".to_string()
}

pub fn records(result: &QueryResult) -> Vec<LogRecord> {
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
    result
        .rows_as_maps()
        .iter()
        .map(|row| {
            let mut changes: Vec<RecordedChange> = match row.get("changes") {
                Some(Value::List(items)) => items
                    .iter()
                    .filter_map(|c| match c {
                        Value::List(f) if f.len() == 6 => Some(RecordedChange {
                            seq: f[0].as_i64().unwrap_or_default(),
                            entity_id: text(Some(&f[1])).unwrap_or_default(),
                            property: text(Some(&f[2])).unwrap_or_default(),
                            before: json_of(Some(&f[3])),
                            after: json_of(Some(&f[4])),
                            delta: matches!(f[5], Value::Boolean(true)),
                        }),
                        _ => None,
                    })
                    .collect(),
                _ => Vec::new(),
            };
            changes.sort_by_key(|c| c.seq);
            LogRecord {
                id: text(row.get("id")).unwrap_or_default(),
                entity_type: text(row.get("entity_type")).unwrap_or_default(),
                action_name: text(row.get("action_name")).unwrap_or_default(),
                entity_id: text(row.get("entity_id")).unwrap_or_default(),
                parameters: text(row.get("parameters")).unwrap_or_else(|| "{}".into()),
                idempotency_key: text(row.get("idempotency_key")).unwrap_or_default(),
                actor: text(row.get("actor")),
                at: text(row.get("at")).unwrap_or_default(),
                undone_by: text(row.get("undone_by")),
                undone_actor: text(row.get("undone_actor")),
                undone_at: text(row.get("undone_at")),
                changes,
            }
        })
        .collect()
}

/// The undo of `record`: one WRITE statement that locks the entry, then (in the global lock
/// order, see `statement::LOCK_ORDER`) what it changed, checks under those locks that the
/// entry is not undone yet (`undone_by` is returned: set when another undo came first) and
/// that every absolute change still holds its recorded `after` value, and only then restores
/// the `before` values, applies the inverse of relative changes (`delta`), deletes the
/// nodes the action created, marks the entry undone and logs the undo itself.
/// Property names come from the catalog's action, never from the stored log.
pub fn undo_statement(
    catalog: &Catalog,
    record: &LogRecord,
    undo_id: &str,
    actor: Option<&str>,
    now: &str,
) -> Result<Statement, String> {
    let action = catalog
        .action(&record.entity_type, &record.action_name)
        .ok_or_else(|| {
            format!(
                "action {}.{} is no longer in the catalog",
                record.entity_type, record.action_name
            )
        })?;
    let allowed: Vec<&str> = action.sets().map(|(_, p, _)| p).collect();
    // Phase 1: the entry itself, first in the lock order. Whether it was undone already is
    // read only once it is held: two undos of one entry queue here, and the second finds
    // `undone_by` set (a relative change such as a debit must not be reverted twice).
    let mut text = String::from("MATCH (log:`ActionLog` {`id`: $log_id})\n");
    text.push_str(&lock_in_order("log", "UNWIND [log] AS node", "log"));
    let mut carried = vec!["log".to_string()];
    for (i, c) in record.changes.iter().enumerate() {
        if !allowed.contains(&c.property.as_str()) {
            return Err(format!(
                "log entry changes `{}`, which {}.{} does not set",
                c.property, record.entity_type, record.action_name
            ));
        }
        text.push_str(&format!(
            "MATCH (log)-[c{i}:`CHANGED` {{`seq`: {}}}]->(x{i})\n",
            c.seq
        ));
        carried.push(format!("c{i}"));
        carried.push(format!("x{i}"));
    }
    let carried = carried.join(", ");
    let targets: Vec<String> = (0..record.changes.len()).map(|i| format!("x{i}")).collect();
    // Phase 2: what the undo writes, all later in the lock order than any entry: the changed
    // entities, the entity acted on (the undo's own log links to what it reverts) and
    // whatever the created nodes are linked to (deleting them deletes those relationships).
    let scope: Vec<String> = targets
        .iter()
        .cloned()
        .chain(std::iter::once("ends".to_string()))
        .collect();
    text.push_str(&format!(
        "OPTIONAL MATCH (log)-[:`CREATED`]->(made)\n\
         WITH {carried}, collect(made) AS made\n\
         WITH {carried}, made, [(log)-[:`ACTION_ON`]->(t) | t] + \
         [(log)-[:`CREATED`]->()--(o) WHERE o <> log | o] AS ends\n"
    ));
    text.push_str(&lock_in_order(
        &scope.join(", "),
        &format!("UNWIND [{}] + ends AS node", targets.join(", ")),
        &format!("{carried}, made"),
    ));
    let unchanged: Vec<String> = record
        .changes
        .iter()
        .enumerate()
        .filter(|(_, c)| !c.delta)
        .map(|(i, c)| {
            let p = quote(&c.property);
            format!("coalesce(x{i}.{p} = c{i}.`after`, x{i}.{p} IS NULL AND c{i}.`after` IS NULL)")
        })
        .collect();
    text.push_str(&format!(
        "WITH {carried}, made, log.`undone_by` AS undone_before, \
         (log.`undone_by` IS NULL AND all(u IN [{}] WHERE u)) AS ok\n",
        unchanged.join(", ")
    ));
    let mut body = Vec::new();
    let mut sets = Vec::new();
    for (i, c) in record.changes.iter().enumerate() {
        let p = quote(&c.property);
        if c.delta {
            sets.push(format!(
                "x{i}.{p} = x{i}.{p} - (c{i}.`after` - c{i}.`before`)"
            ));
        } else {
            sets.push(format!("x{i}.{p} = c{i}.`before`"));
        }
    }
    if !sets.is_empty() {
        body.push(format!("SET {}", sets.join(", ")));
    }
    body.push("SET log.`undone_by` = $undo_id".into());
    body.push(
        "CREATE (u:`ActionLog` {`id`: $undo_id, `idempotency_key`: $undo_id, `action`: $action, \
         `entity_type`: log.`entity_type`, `action_name`: $action_name, `entity_id`: log.`entity_id`, \
         `parameters`: $parameters, `actor`: $actor, `at`: $now, `undoes`: log.`id`})"
            .into(),
    );
    body.push("CREATE (u)-[:`UNDOES`]->(log)".into());
    for (i, _) in record.changes.iter().enumerate() {
        body.push(format!(
            "CREATE (u)-[:`CHANGED` {{`seq`: c{i}.`seq`, `property`: c{i}.`property`, `entity_id`: c{i}.`entity_id`, \
             `before`: c{i}.`after`, `after`: c{i}.`before`, `delta`: c{i}.`delta`}}]->(x{i})"
        ));
    }
    body.push("FOREACH (n IN made | DETACH DELETE n)".into());
    text.push_str(&format!(
        "FOREACH (_ IN CASE WHEN ok THEN [1] ELSE [] END |\n  {}\n)\n\
         RETURN ok, size(made) AS deleted, undone_before AS undone_by",
        body.join("\n  ")
    ));
    let mut params = Map::new();
    params.insert("log_id".into(), json!(record.id));
    params.insert("undo_id".into(), json!(undo_id));
    params.insert(
        "action".into(),
        json!(format!(
            "{}.{}.undo",
            record.entity_type, record.action_name
        )),
    );
    params.insert(
        "action_name".into(),
        json!(format!("undo:{}", record.action_name)),
    );
    params.insert(
        "parameters".into(),
        json!(json!({"undoes": record.id}).to_string()),
    );
    params.insert("actor".into(), actor.map_or(Json::Null, |a| json!(a)));
    params.insert("now".into(), json!(now));
    Ok(Statement { text, params })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(undone: bool) -> LogRecord {
        LogRecord {
            id: "LOG-1".into(),
            entity_type: "PurchaseOrder".into(),
            action_name: "makePayment".into(),
            entity_id: "PO-1".into(),
            parameters: "{}".into(),
            idempotency_key: "k".into(),
            actor: Some("ada".into()),
            at: "2026-11-27T10:00:00Z".into(),
            undone_by: undone.then(|| "LOG-2".into()),
            undone_actor: undone.then(|| "bob".into()),
            undone_at: undone.then(|| "2026-11-27T11:00:00Z".into()),
            changes: vec![RecordedChange {
                seq: 0,
                entity_id: "PO-1".into(),
                property: "status".into(),
                before: Some("\"approved\"".into()),
                after: Some("\"paid\"".into()),
                delta: false,
            }],
        }
    }

    #[test]
    fn a_replay_of_an_undone_entry_fails_and_says_how_to_run_it_again() {
        let o = record(true).applied_outcome(true);
        assert!(!o.success);
        assert!(o.changes.is_empty());
        assert!(o.replayed);
        assert_eq!(o.undone.as_ref().map(|u| u.log_id.as_str()), Some("LOG-2"));
        let f = o.failure.expect("a failure");
        assert_eq!(f.reason, FailureReason::Conflict);
        for part in [
            "PurchaseOrder.makePayment ran on PO-1",
            "(log LOG-1)",
            "undone by bob at 2026-11-27T11:00:00Z (log LOG-2)",
            "nothing ran now",
            "send a new idempotency_key",
        ] {
            assert!(f.message.contains(part), "{part}: {}", f.message);
        }
    }

    #[test]
    fn a_replay_that_stands_and_a_found_application_are_successes() {
        let replay = record(false).applied_outcome(true);
        assert!(replay.success && replay.replayed && replay.failure.is_none());
        assert_eq!(replay.changes.len(), 1);
        // Found applied by reconciliation (not a replay): the success it was, undone or not.
        let found = record(true).applied_outcome(false);
        assert!(found.success && !found.replayed);
        assert!(found.undone.is_some());
    }
}
