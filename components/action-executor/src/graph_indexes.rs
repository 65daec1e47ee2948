//! The graph tools' indexes, created by the same set-up as the executor's own
//! (`POST /actions/setup`): a range index per declared key and caption, and the full-text
//! search index over the profile's text properties. The profile is the declared file
//! merged with the graph's constraints as they are after the executor's own were made.

use kg_graph_profile::{
    CONSTRAINTS_STATEMENT, KeySource, Profile, SEARCH_INDEX, key_index_statements,
    keys_from_constraint_rows, search_index_statement,
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
    let mut profile = Profile::merge(declared, &constraint_keys);
    // A declared key the graph also constrains already has the constraint's index: a
    // second index on the same property is refused by Neo4j.
    for (label, entry) in profile.labels.iter_mut() {
        if constraint_keys
            .get(label)
            .is_some_and(|keys| keys.contains(&entry.key))
        {
            entry.key_source = Some(KeySource::Constraint);
        }
    }
    // Likewise a caption that is also a constrained property.
    let constrained: Vec<String> = constraint_keys
        .iter()
        .flat_map(|(label, keys)| {
            keys.iter()
                .filter(|k| k.len() == 1)
                .map(move |k| format!("FOR (n:{}) ON (n.{})", quote(label), quote(&k[0])))
        })
        .collect();
    let mut statements: Vec<String> = key_index_statements(&profile)
        .into_iter()
        .filter(|s| !constrained.iter().any(|c| s.contains(c.as_str())))
        .collect();
    if let Some(create) = search_index_statement(&profile) {
        let now = plain_rows(
            client
                .run(SEARCH_INDEX_NOW, Map::new(), AccessMode::Read)?
                .rows,
        );
        if let Some(existing) = now.first()
            && definition(existing) != wanted(&profile)
        {
            statements.push(format!("DROP INDEX {SEARCH_INDEX} IF EXISTS"));
        }
        statements.push(create);
    }
    Ok(statements)
}

fn quote(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

fn plain_rows(rows: Vec<Vec<Value>>) -> Vec<Vec<Json>> {
    rows.iter()
        .map(|row| row.iter().map(Value::to_plain_json).collect())
        .collect()
}

type Definition = (BTreeSet<String>, BTreeSet<String>);

/// An index row's (labels, properties).
fn definition(row: &[Json]) -> Definition {
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

/// The search index's (labels, properties) the profile asks for.
fn wanted(profile: &Profile) -> Definition {
    let mut labels = BTreeSet::new();
    let mut properties = BTreeSet::new();
    for (label, entry) in &profile.labels {
        if !entry.text.is_empty() {
            labels.insert(label.clone());
            properties.extend(entry.text.iter().cloned());
        }
    }
    (labels, properties)
}
