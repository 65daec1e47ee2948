//! The shipped catalog loads, and its statements have the shape the executor relies on.

use kg_actions::catalog::load;
use kg_actions::statement::{ActionPlan, RunContext};
use serde_json::Map;

fn catalog_text() -> String {
    std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../catalog/actions.toml"
    ))
    .expect("catalog/actions.toml")
}

#[test]
fn the_demo_catalog_loads() {
    let catalog = load(&catalog_text()).unwrap();
    let names: Vec<String> = catalog
        .actions
        .iter()
        .map(|a| format!("{}.{}", a.entity, a.name))
        .collect();
    for wanted in [
        "PurchaseOrder.approve",
        "PurchaseOrder.makePayment",
        "PurchaseOrder.cancel",
        "PurchaseOrder.reopen",
        "Supplier.blockSupplier",
    ] {
        assert!(names.iter().any(|n| n == wanted), "{wanted} in {names:?}");
    }
    let pay = catalog.action("PurchaseOrder", "makePayment").unwrap();
    let plan = ActionPlan::new(&catalog, pay);
    let check_names: Vec<&str> = plan.checks.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        check_names,
        [
            "has_account",
            "not_paid",
            "not_cancelled",
            "is_approved",
            "supplier_not_blocked",
            "sufficient_funds"
        ]
    );
    assert!(
        plan.changes
            .iter()
            .any(|c| c.property == "balance" && c.delta)
    );
    assert!(
        plan.changes
            .iter()
            .any(|c| c.property == "status" && !c.delta)
    );

    let run = RunContext {
        idempotency_key: "k".into(),
        parameters: Map::new(),
        actor: None,
        now: "2026-11-23T04:00:00.000Z".into(),
    };
    let s = plan.execute_statement(&[("PO-0001".into(), "L-0".into())], &run, 1_795_000_000_000);
    assert_eq!(s.params["not_after"], 1_795_000_000_000i64);
    assert!(
        s.text.contains("timestamp() > $not_after AS expired"),
        "{}",
        s.text
    );
    assert!(
        s.text.starts_with("UNWIND $items AS item\n")
            && s.text
                .contains("\nCALL (item, e_this, e_account, e_supplier) {\n"),
        "{}",
        s.text
    );
    assert!(
        s.text
            .contains("SET n.`_kg_lock` = true REMOVE n.`_kg_lock`")
    );
    assert!(
        !s.text.contains("'paid'"),
        "values are parameters: {}",
        s.text
    );
    assert_eq!(s.params["today"], "2026-11-23");
    let indexes = kg_actions::catalog::index_statements(&catalog);
    assert!(
        indexes.contains(
            &"CREATE INDEX `kg_purchaseorder_id` IF NOT EXISTS FOR (n:`PurchaseOrder`) ON (n.`id`)"
                .to_string()
        )
    );
    // Each entity's key is indexed; the executor's own keys are unique.
    assert_eq!(indexes.len(), catalog.entities.len());
    let keys = kg_actions::catalog::unique_keys();
    let constraints: Vec<&str> = keys.iter().map(|k| k.constraint.as_str()).collect();
    assert_eq!(
        constraints,
        [
            "CREATE CONSTRAINT `kg_actionlog_id_unique` IF NOT EXISTS FOR (n:`ActionLog`) REQUIRE n.`id` IS UNIQUE",
            "CREATE CONSTRAINT `kg_actionlog_execution_key_unique` IF NOT EXISTS FOR (n:`ActionLog`) REQUIRE n.`execution_key` IS UNIQUE",
            "CREATE CONSTRAINT `kg_actionapproval_id_unique` IF NOT EXISTS FOR (n:`ActionApproval`) REQUIRE n.`id` IS UNIQUE",
        ]
    );
    assert_eq!(
        keys[0].drop_legacy_index,
        "DROP INDEX `kg_actionlog_id` IF EXISTS"
    );
    let pay = catalog.action("PurchaseOrder", "makePayment").unwrap();
    assert_eq!(
        pay.batch_limits.get(&kg_identity::Role::Operator),
        Some(&100)
    );
    assert!(catalog.action("PurchaseOrder", "cancel").unwrap().four_eyes);
    assert_eq!(
        catalog.action("Supplier", "blockSupplier").unwrap().roles,
        vec![kg_identity::Role::Admin]
    );
    let v = plan.validate_statement(
        &["PO-0001".into()],
        &Map::new(),
        "2026-11-23T04:00:00.000Z",
        "dev",
    );
    assert!(
        !v.text.contains("SET") && !v.text.contains("CREATE"),
        "{}",
        v.text
    );
}

#[test]
fn catalog_errors_name_the_line() {
    let broken = catalog_text().replace(
        "check = \"account.balance >= this.amount\"",
        "check = \"account.balanse >= this.amount\"",
    );
    let e = load(&broken).unwrap_err();
    let line = catalog_text()
        .lines()
        .position(|l| l.contains("account.balance >= this.amount"))
        .unwrap()
        + 1;
    assert_eq!(e.line, line, "{e}");
    assert!(
        e.message.contains("unknown property `balanse` of Account"),
        "{e}"
    );

    let e = load(&catalog_text().replace(
        "\"set this.status = 'approved'\"",
        "\"set this.status = 1\"",
    ))
    .unwrap_err();
    assert!(
        e.message.contains("is a string; the value is a integer"),
        "{e}"
    );
    let e = load(&catalog_text().replace("via = \"-[:PLACED_WITH]->\"", "via = \"PLACED_WITH\""))
        .unwrap_err();
    assert!(e.message.contains("`via` must look like"), "{e}");
    let e = load("[[actions]]\nentity = 'X'\nname = 'a'\ndescription = ''\n").unwrap_err();
    assert_eq!(e.line, 1);
    assert!(e.message.contains("entity type `X` is not declared"), "{e}");
    let e = load("[entities.A]\nkey = 'id'\nproperties = { id = 'strin' }\n").unwrap_err();
    assert_eq!(e.line, 3, "{e}");
}

/// The demo's `approve` records the caller (`caller()`, sent as `$actor`), and takes no
/// parameter that could name someone else; the dry run carries the caller too, so a
/// precondition may compare with it.
#[test]
fn approve_records_the_caller_not_a_parameter() {
    let catalog = load(&catalog_text()).unwrap();
    let approve = catalog.action("PurchaseOrder", "approve").unwrap();
    assert!(approve.parameters.is_empty(), "{:?}", approve.parameters);
    let plan = ActionPlan::new(&catalog, approve);
    let run = RunContext {
        idempotency_key: "k".into(),
        parameters: Map::new(),
        actor: Some("ada".into()),
        now: "2026-11-23T04:00:00.000Z".into(),
    };
    let s = plan.execute_statement(&[("PO-0001".into(), "L-0".into())], &run, 0);
    assert!(s.text.contains("$actor] AS after"), "{}", s.text);
    assert_eq!(s.params["actor"], "ada");
    let v = plan.validate_statement(
        &["PO-0001".into()],
        &Map::new(),
        "2026-11-23T04:00:00.000Z",
        "ada",
    );
    assert_eq!(v.params["actor"], "ada");

    let checked = catalog_text().replace(
        "check = \"this.status == 'draft'\"",
        "check = \"this.status == 'draft' and this.approved_by != caller()\"",
    );
    assert!(load(&checked).is_ok(), "caller() is a string in a check");
    let wrong = catalog_text().replace(
        "check = \"this.status == 'draft'\"",
        "check = \"caller() > 1\"",
    );
    assert!(load(&wrong).is_err(), "caller() is not a number");
}
