//! The statements' locking discipline (see `statement::LOCK_ORDER`): every write statement
//! locks through one sorted list, in the one global order, and reads nothing it decides on
//! before the read barrier that follows its locks.

use kg_actions::catalog::{Catalog, load};
use kg_actions::log::{LogRecord, RecordedChange, undo_statement};
use kg_actions::statement::{ActionPlan, LOCK_ORDER, READ_BARRIER, RunContext, lock_in_order};
use serde_json::Map;

fn catalog() -> Catalog {
    load(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../catalog/actions.toml"
        ))
        .expect("catalog/actions.toml"),
    )
    .expect("the demo catalog loads")
}

fn run() -> RunContext {
    RunContext {
        idempotency_key: "k".into(),
        parameters: Map::new(),
        actor: None,
        now: "2026-11-23T04:00:00.000Z".into(),
    }
}

const LOCK_LINE: &str = "FOREACH (n IN _ordered | SET n.`_kg_lock` = true REMOVE n.`_kg_lock`)\n";

/// The byte offsets where each lock ends (its barrier line included), checking that every
/// lock goes through the sorted list and is followed at once by the barrier.
fn locks(text: &str) -> Vec<usize> {
    assert_eq!(
        text.matches("SET n.`_kg_lock`").count(),
        text.matches(LOCK_LINE).count(),
        "every lock goes through the list sorted in the global order:\n{text}"
    );
    let mut ends = Vec::new();
    for (at, _) in text.match_indices(LOCK_LINE) {
        let before = &text[..at];
        let sorted = before.rfind(&format!("WITH node ORDER BY {LOCK_ORDER}\n"));
        assert!(
            sorted.is_some_and(|s| !before[s..].contains("FOREACH")),
            "the locked list is sorted by LOCK_ORDER:\n{text}"
        );
        let next = &text[at + LOCK_LINE.len()..];
        let barrier = next.lines().next().unwrap_or_default();
        assert!(
            barrier.starts_with("WITH ") && barrier.ends_with(&format!(", {READ_BARRIER}")),
            "the read barrier must follow the lock at once, found `{barrier}`:\n{text}"
        );
        ends.push(at + LOCK_LINE.len() + barrier.len());
    }
    ends
}

/// The first offset of any of `reads` in `text`.
fn first_read(text: &str, reads: &[&str]) -> usize {
    reads
        .iter()
        .filter_map(|r| text.find(r))
        .min()
        .unwrap_or_else(|| panic!("none of {reads:?} in:\n{text}"))
}

#[test]
fn the_order_is_the_documented_one() {
    assert_eq!(
        LOCK_ORDER,
        "CASE WHEN node:`ActionLog` THEN 0 ELSE 1 END, head(labels(node)), elementId(node)"
    );
    assert_eq!(READ_BARRIER, "count(*) AS _locked");
    let clause = lock_in_order("x", "UNWIND [x] AS node", "x");
    assert_eq!(locks(&clause).len(), 1);
    assert!(
        clause.ends_with("WITH x, count(*) AS _locked\n"),
        "{clause}"
    );
}

#[test]
fn every_action_locks_the_whole_chunk_in_order_then_reads() {
    let catalog = catalog();
    for action in &catalog.actions {
        let plan = ActionPlan::new(&catalog, action);
        let items = [
            ("PO-1".to_string(), "L-1".to_string()),
            ("PO-2".into(), "L-2".into()),
        ];
        let s = plan.execute_statement(&items, &run(), 1_795_000_000_000);
        let ends = locks(&s.text);
        assert_eq!(ends.len(), 1, "one lock for the whole chunk:\n{}", s.text);
        // Nothing the checks or effects use is read before the barrier: no property of a
        // bound entity, no prior execution.
        let read = first_read(
            &s.text,
            &["e_this.`", "e_account.`", "e_supplier.`", "prior"],
        );
        assert!(
            read > ends[0],
            "{}.{} reads before its locks are all held:\n{}",
            action.entity,
            action.name,
            s.text
        );
        // `this` and every binding it sets are in the locked list.
        let list = &s.text[..ends[0]];
        assert!(list.contains("row.e_this"), "{}", s.text);
        for change in &plan.changes {
            assert!(
                list.contains(&format!("row.e_{}", change.binding)),
                "{}.{} does not lock `{}`:\n{}",
                action.entity,
                action.name,
                change.binding,
                s.text
            );
        }
        // Rows are still checked and applied one after another (each sees the last's writes).
        assert!(
            s.text
                .contains("\nUNWIND rows AS row\nWITH row.item AS item"),
            "{}",
            s.text
        );
    }
}

#[test]
fn removing_the_barrier_is_caught() {
    let catalog = catalog();
    let pay = catalog.action("PurchaseOrder", "makePayment").unwrap();
    let s = ActionPlan::new(&catalog, pay).execute_statement(
        &[("PO-1".into(), "L-1".into())],
        &run(),
        0,
    );
    let simplified = s.text.replace("WITH rows, count(*) AS _locked\n", "");
    assert_ne!(simplified, s.text);
    let caught = std::panic::catch_unwind(|| locks(&simplified));
    assert!(caught.is_err(), "a statement without the barrier passed");
}

fn pay_record(undone_by: Option<&str>) -> LogRecord {
    let change = |seq, entity: &str, property: &str, delta| RecordedChange {
        seq,
        entity_id: entity.into(),
        property: property.into(),
        before: None,
        after: None,
        delta,
    };
    LogRecord {
        id: "LOG-1".into(),
        entity_type: "PurchaseOrder".into(),
        action_name: "makePayment".into(),
        entity_id: "PO-1".into(),
        parameters: "{}".into(),
        idempotency_key: "k".into(),
        actor: None,
        at: "2026-11-23T04:00:00.000Z".into(),
        undone_by: undone_by.map(str::to_string),
        undone_actor: None,
        undone_at: None,
        changes: vec![
            change(0, "PO-1", "status", false),
            change(1, "PO-1", "paid_on", false),
            change(2, "ACC-1", "balance", true),
        ],
    }
}

#[test]
fn undo_locks_the_entry_first_and_checks_it_under_the_lock() {
    let s = undo_statement(&catalog(), &pay_record(None), "UNDO-1", Some("ann"), "now").unwrap();
    let ends = locks(&s.text);
    assert_eq!(
        ends.len(),
        2,
        "the entry, then what it changed:\n{}",
        s.text
    );
    // Phase 1 locks the entry alone, before anything else is matched.
    assert!(
        s.text.starts_with(
            "MATCH (log:`ActionLog` {`id`: $log_id})\nCALL (log) {\nUNWIND [log] AS node\n"
        ),
        "{}",
        s.text
    );
    assert!(
        !s.text[..ends[0]].contains("undone_by"),
        "`undone_by` is read only under the lock:\n{}",
        s.text
    );
    // Whether it was undone, and every value checked, is read after both locks.
    let read = first_read(&s.text, &["log.`undone_by`", "x0.`", "x1.`", "x2.`"]);
    assert!(read > ends[1], "{}", s.text);
    assert!(
        s.text.contains("(log.`undone_by` IS NULL AND all("),
        "{}",
        s.text
    );
    // Phase 2 locks the changed entities, the one acted on and the created nodes' ends.
    let phase2 = &s.text[ends[0]..ends[1]];
    assert!(
        phase2.contains("UNWIND [x0, x1, x2] + ends AS node"),
        "{}",
        s.text
    );
    assert!(phase2.contains("(log)-[:`ACTION_ON`]->(t)"), "{}", s.text);
    assert!(
        phase2.contains("(log)-[:`CREATED`]->()--(o) WHERE o <> log"),
        "{}",
        s.text
    );
    // The caller learns who undid it when it was not this undo.
    assert!(
        s.text
            .ends_with("RETURN ok, size(made) AS deleted, undone_before AS undone_by")
    );
}

#[test]
fn execute_and_undo_sort_with_the_same_expression() {
    let catalog = catalog();
    let pay = catalog.action("PurchaseOrder", "makePayment").unwrap();
    let execute = ActionPlan::new(&catalog, pay).execute_statement(
        &[("PO-1".into(), "L-1".into())],
        &run(),
        0,
    );
    let undo = undo_statement(&catalog, &pay_record(None), "U", None, "now").unwrap();
    let order = format!("ORDER BY {LOCK_ORDER}\n");
    assert_eq!(execute.text.matches(&order).count(), 1);
    assert_eq!(undo.text.matches(&order).count(), 2);
    // No other ordering of locks anywhere.
    for text in [&execute.text, &undo.text] {
        assert_eq!(
            text.matches("ORDER BY").count(),
            text.matches(&order).count()
        );
    }
}
