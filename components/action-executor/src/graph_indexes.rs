//! The graph tools' indexes, created by the same set-up as the executor's own
//! (`POST /actions/setup`): a range index per declared key and caption, and the full-text
//! search index over the profile's text properties. The profile is the declared file
//! merged with the graph's constraints as they are after the executor's own were made.

use kg_graph_profile::{
    CONSTRAINTS_STATEMENT, Profile, SEARCH_INDEX, key_index_statements, keys_from_constraint_rows,
    search_index_definition, search_index_statement,
};
use neo4j_client::{AccessMode, Client, Neo4jError, Transport, Value};
use serde_json::{Map, Value as Json};
use std::collections::BTreeSet;

/// The existing search index's labels and properties, if it exists.
const SEARCH_INDEX_NOW: &str = "SHOW INDEXES YIELD name, labelsOrTypes, properties \
     WHERE name = 'kg_graph_search' RETURN labelsOrTypes, properties";

/// The statements that bring the graph's indexes in line with the profile: each key and
/// caption index, and the search index, dropped first when it exists with another
/// definition (Neo4j cannot change an index in place, and `IF NOT EXISTS` would keep the
/// stale one).
pub fn statements<T: Transport>(
    client: &Client<T>,
    declared: &kg_graph_profile::Declared,
) -> Result<Vec<String>, Neo4jError> {
    let rows = plain_rows(
        client
            .run(CONSTRAINTS_STATEMENT, Map::new(), AccessMode::Read)?
            .rows,
    );
    let mut constraint_keys = keys_from_constraint_rows(&rows);
    // The executor's own bookkeeping is not the business's graph: never searched.
    for own in kg_actions::catalog::RESERVED_LABELS {
        constraint_keys.remove(*own);
    }
    let profile = Profile::merge(declared, &constraint_keys);
    let mut statements = key_index_statements(&profile);
    if let Some(create) = search_index_statement(&profile) {
        let now = plain_rows(
            client
                .run(SEARCH_INDEX_NOW, Map::new(), AccessMode::Read)?
                .rows,
        );
        if let Some(existing) = now.first()
            && definition(existing) != search_index_definition(&profile)
        {
            statements.push(format!("DROP INDEX {SEARCH_INDEX} IF EXISTS"));
        }
        statements.push(create);
    }
    Ok(statements)
}

fn plain_rows(rows: Vec<Vec<Value>>) -> Vec<Vec<Json>> {
    rows.iter()
        .map(|row| row.iter().map(Value::to_plain_json).collect())
        .collect()
}

/// An index row's (labels, properties).
fn definition(row: &[Json]) -> (BTreeSet<String>, BTreeSet<String>) {
    let names = |v: Option<&Json>| -> BTreeSet<String> {
        v.and_then(Json::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(Json::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    (names(row.first()), names(row.get(1)))
}
