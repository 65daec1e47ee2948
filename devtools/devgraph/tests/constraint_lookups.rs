//! A uniqueness constraint is backed by an index, as in Neo4j: Grafeo checks a unique key
//! through a property index when there is one and by scanning every node of the label
//! otherwise, so devgraph indexes each constrained property (invisibly: SHOW INDEXES lists
//! only the constraint's own backing index) and a write's check does not grow with the
//! label.

use devgraph::graph::{AccessMode, Graph};
use devgraph::values::Format;
use serde_json::{Map, Value as Json};

fn run(g: &Graph, statement: &str) -> Result<Vec<Json>, String> {
    g.run(statement, &Map::new(), AccessMode::Write, Format::Plain)
        .map(|body| {
            body["data"]["values"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .map_err(|e| format!("{}: {}", e.code, e.message))
}

#[test]
fn a_constrained_property_is_indexed_and_still_enforced() {
    let g = Graph::new(grafeo::GrafeoDB::new_in_memory());
    assert!(!g.db().has_property_index("execution_key"));
    run(
        &g,
        "CREATE CONSTRAINT log_key IF NOT EXISTS FOR (n:ActionLog) REQUIRE n.execution_key IS UNIQUE",
    )
    .unwrap();
    assert!(g.db().has_property_index("execution_key"));
    run(
        &g,
        "UNWIND range(1, 500) AS i CREATE (:ActionLog {execution_key: 'k' + toString(i)})",
    )
    .unwrap();
    let duplicate = run(&g, "CREATE (:ActionLog {execution_key: 'k7'})").unwrap_err();
    assert!(
        duplicate.starts_with("Neo.ClientError.Schema.ConstraintValidationFailed"),
        "{duplicate}"
    );
    // Another label may hold the same value: the key is per label.
    run(&g, "CREATE (:Other {execution_key: 'k7'})").unwrap();
    let indexes = run(
        &g,
        "SHOW RANGE INDEXES YIELD name, owningConstraint RETURN name, owningConstraint",
    )
    .unwrap();
    assert_eq!(
        indexes,
        vec![serde_json::json!(["log_key", "log_key"])],
        "only the constraint's index is listed (beside the token lookups)"
    );
}
