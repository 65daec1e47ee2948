//! Prints, one JSON string per line, every statement kg-actions builds for the demo catalog
//! (`catalog/actions.toml`) and typical inputs: each action's validate and execute (one and
//! two entities), its undo, the action-log reads, the approval statements and the index DDL.
//! Input of the Cypher lint gate (`tools/cypher-lint`, issue #15):
//!
//! `cargo run --release --example dump_action_statements > actions.jsonl`

use kg_actions::approval::{self, NewApproval};
use kg_actions::catalog::{index_statements, load, resolve_parameters, unique_keys};
use kg_actions::log::{self, LogRecord, RecordedChange};
use kg_actions::statement::{ActionPlan, RunContext, execution_key};
use serde_json::{Map, Value as Json, json};
use std::collections::BTreeSet;

const NOW: &str = "2026-11-25T09:30:00.000Z";
const NOW_MS: i64 = 1_795_599_000_000;

fn main() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../catalog/actions.toml");
    let text = std::fs::read_to_string(path).expect("catalog/actions.toml");
    let catalog = load(&text).expect("the demo catalog loads");
    let mut out = BTreeSet::new();

    for action in &catalog.actions {
        let plan = ActionPlan::new(&catalog, action);
        // Every parameter given (its default, else a sample of its type).
        let given: Map<String, Json> = action
            .parameters
            .iter()
            .map(|p| {
                let value = p.default.clone().unwrap_or_else(|| json!("sample"));
                (p.name.clone(), value)
            })
            .collect();
        let parameters =
            resolve_parameters(action, &Json::Object(given)).expect("sample parameters resolve");
        for ids in [vec!["ID-1".to_string()], vec!["ID-1".into(), "ID-2".into()]] {
            out.insert(plan.validate_statement(&ids, &parameters, NOW, "dev").text);
            let run = RunContext {
                idempotency_key: "key-1".into(),
                parameters: parameters.clone(),
                actor: Some("dev".into()),
                now: NOW.into(),
            };
            let items: Vec<(String, String)> = ids
                .iter()
                .enumerate()
                .map(|(i, id)| (id.clone(), format!("LOG-{i}")))
                .collect();
            out.insert(plan.execute_statement(&items, &run, NOW_MS).text);
        }
        // The undo of one applied entry: a change per property the action sets.
        let record = LogRecord {
            id: "LOG-0".into(),
            entity_type: action.entity.clone(),
            action_name: action.name.clone(),
            entity_id: "ID-1".into(),
            parameters: "{}".into(),
            idempotency_key: "key-1".into(),
            actor: Some("dev".into()),
            at: NOW.into(),
            undone_by: None,
            undone_actor: None,
            undone_at: None,
            changes: plan
                .changes
                .iter()
                .enumerate()
                .map(|(i, c)| RecordedChange {
                    seq: i as i64,
                    entity_id: "ID-1".into(),
                    property: c.property.clone(),
                    before: Some("\"before\"".into()),
                    after: Some("\"after\"".into()),
                    delta: c.delta,
                })
                .collect(),
        };
        for actor in [Some("dev"), None] {
            out.insert(
                log::undo_statement(&catalog, &record, "UNDO-1", actor, NOW)
                    .expect("the undo of a recorded entry builds")
                    .text,
            );
        }
        let key = execution_key(action, "key-1", "ID-1");
        out.insert(log::executions_statement(&[key]).text);
    }

    let ids = vec!["LOG-1".to_string(), "LOG-2".to_string()];
    out.insert(log::entries_statement(&ids).text);
    out.insert(log::page_statement(None, 20).text);
    out.insert(log::page_statement(Some((NOW, "LOG-9")), 20).text);

    let entity_ids = vec!["PO-0001".to_string()];
    let parameters = json!({"reason": "duplicate"});
    for conversation in [Some("conv-1"), None] {
        out.insert(
            approval::create_statement(&NewApproval {
                id: "APR-1",
                plan_hash: "hash",
                entity_type: "PurchaseOrder",
                action_name: "cancel",
                entity_ids: &entity_ids,
                parameters: &parameters,
                requested_by: "dev",
                conversation,
                reason: "requires approval",
                four_eyes: true,
                now: NOW,
                expires_at: NOW,
                expires_ms: NOW_MS,
            })
            .text,
        );
    }
    out.insert(approval::get_statement("APR-1").text);
    out.insert(approval::claim_statement("APR-1", "hash", "dev", "key-1", NOW, NOW_MS).text);
    for may_approve in [true, false] {
        out.insert(approval::reject_statement("APR-1", "dev", may_approve, NOW).text);
    }
    out.extend(index_statements(&catalog));
    for key in unique_keys() {
        out.extend([key.constraint, key.drop_legacy_index, key.legacy_index]);
    }

    for statement in out {
        println!("{}", Json::String(statement));
    }
}
