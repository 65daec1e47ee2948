//! Indexes and constraints share one schema in Neo4j 5; devgraph keeps Grafeo's plain
//! indexes and constraints apart, so it checks here what Neo4j's kernel checks between
//! them (`Operations.assertNoBlockingSchemaRulesExists` and its exceptions):
//! - a uniqueness or node-key constraint cannot be created while a plain (RANGE) index
//!   covers the same label and properties, even with `IF NOT EXISTS`:
//!   `Neo.ClientError.Schema.IndexAlreadyExists`, "There already exists an index (:L {p}).
//!   A constraint cannot be created until the index has been dropped."
//!   (`AlreadyIndexedException`, constraint context); nor with the name of an index:
//!   `IndexWithNameAlreadyExists`;
//! - `CREATE INDEX` on a label and properties a uniqueness or node-key constraint covers
//!   (its backing RANGE index is the equivalent rule): with `IF NOT EXISTS` nothing
//!   happens; without, `Neo.ClientError.Schema.ConstraintAlreadyExists`, "There is a
//!   uniqueness constraint on (:L {p}), so an index is already created that matches
//!   this." (`AlreadyConstrainedException`, index context). Over another plain index of
//!   the same schema: nothing with `IF NOT EXISTS`, else `EquivalentSchemaRuleAlreadyExists`
//!   (same name) or `IndexAlreadyExists` "There already exists an index (:L {p})."; a name
//!   taken by another index or a constraint: `IndexWithNameAlreadyExists` /
//!   `ConstraintWithNameAlreadyExists`;
//! - `SHOW [ALL|RANGE|VECTOR|FULLTEXT] INDEX[ES] [YIELD …] [WHERE …] [RETURN …]` lists
//!   Grafeo's indexes and, as Neo4j does, the RANGE index backing each constraint (named
//!   as the constraint, `owningConstraint` set). The first four columns stay Grafeo's
//!   (`name`, `type`, `label`, `property`), then Neo4j 5's (`id`, `state`,
//!   `populationPercent`, `entityType`, `labelsOrTypes`, `properties`, `indexProvider`,
//!   `owningConstraint`, `lastRead`, `readCount`); `type` is Neo4j's (`RANGE`, `VECTOR`,
//!   `FULLTEXT`).

use crate::constraints::Constraint;
use crate::errors::{Neo4jError, from_grafeo};
use crate::schema;
use grafeo::Value;
use grafeo::session::Session;
use serde_json::{Value as Json, json};

/// One index as Neo4j would list it.
#[derive(Debug, Clone, PartialEq)]
pub struct Index {
    pub name: String,
    /// Neo4j's type: `RANGE`, `VECTOR`, `FULLTEXT`.
    pub kind: &'static str,
    pub label: String,
    pub properties: Vec<String>,
    /// The constraint whose backing index this is.
    pub owning_constraint: Option<String>,
}

impl Index {
    fn provider(&self) -> &'static str {
        match self.kind {
            "VECTOR" => "vector-2.0",
            "FULLTEXT" => "fulltext-1.0",
            _ => "range-1.0",
        }
    }
}

/// Neo4j's description of a label schema: `(:Label {a, b})`.
pub fn schema_text(label: &str, properties: &[String]) -> String {
    format!("(:{label} {{{}}})", properties.join(", "))
}

fn neo4j_kind(grafeo: &str) -> &'static str {
    let lower = grafeo.to_ascii_lowercase();
    if lower.contains("vector") {
        "VECTOR"
    } else if lower.contains("text") {
        "FULLTEXT"
    } else {
        "RANGE"
    }
}

/// Grafeo's indexes, one per name (Grafeo lists a composite index once per property).
pub fn grafeo_indexes(session: &Session) -> Result<Vec<Index>, Neo4jError> {
    let result = session
        .execute_cypher("SHOW INDEXES")
        .map_err(|e| from_grafeo(&e))?;
    let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or_default().to_string();
    let mut out: Vec<Index> = Vec::new();
    for row in result.rows() {
        let name = text(row.first());
        let property = text(row.get(3));
        // A property index without a label is the lookup structure devgraph gives a
        // constrained property (`constraints::ensure_backing_indexes`): the constraint's
        // own backing index stands for it, as in Neo4j.
        if text(row.get(2)).is_empty() {
            continue;
        }
        if let Some(index) = out.iter_mut().find(|i| i.name == name) {
            index.properties.push(property);
            continue;
        }
        out.push(Index {
            name,
            kind: neo4j_kind(&text(row.get(1))),
            label: text(row.get(2)),
            properties: vec![property],
            owning_constraint: None,
        });
    }
    Ok(out)
}

/// Every index Neo4j would list: Grafeo's and the constraints' backing ones, by name.
pub fn all_indexes(session: &Session) -> Result<Vec<Index>, Neo4jError> {
    let mut all = grafeo_indexes(session)?;
    all.extend(
        crate::constraints::list(session)?
            .into_iter()
            .map(|c| Index {
                name: c.name.clone(),
                kind: "RANGE",
                label: c.label,
                properties: c.properties,
                owning_constraint: Some(c.name),
            }),
    );
    all.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(all)
}

/// Why `constraint` may not be created next to Grafeo's `indexes`, if it may not.
pub fn constraint_blocked(
    constraint: &Constraint,
    named: bool,
    indexes: &[Index],
) -> Option<Neo4jError> {
    if indexes.iter().any(|i| {
        i.kind == "RANGE" && i.label == constraint.label && i.properties == constraint.properties
    }) {
        return Some(Neo4jError::new(
            400,
            "Neo.ClientError.Schema.IndexAlreadyExists",
            format!(
                "There already exists an index {}. A constraint cannot be created until the index has been dropped.",
                schema_text(&constraint.label, &constraint.properties)
            ),
        ));
    }
    if named && indexes.iter().any(|i| i.name == constraint.name) {
        return Some(index_name_taken(&constraint.name));
    }
    None
}

fn index_name_taken(name: &str) -> Neo4jError {
    Neo4jError::new(
        400,
        "Neo.ClientError.Schema.IndexWithNameAlreadyExists",
        format!("There already exists an index called '{name}'."),
    )
}

/// `CREATE [RANGE] INDEX [name] [IF NOT EXISTS] FOR (n:L) ON (n.p, …)`.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateIndex {
    pub name: Option<String>,
    pub if_not_exists: bool,
    pub label: String,
    pub properties: Vec<String>,
}

/// What to do with a plain `CREATE INDEX`.
#[derive(Debug)]
pub enum IndexVerdict {
    /// Nothing (an equivalent rule exists and `IF NOT EXISTS` was given).
    Nothing,
    /// Let Grafeo create it, with this statement.
    Create(String),
}

fn quote(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// Checks `create` against the schema as Neo4j's kernel does.
pub fn create_index(session: &Session, create: &CreateIndex) -> Result<IndexVerdict, Neo4jError> {
    let constraints = crate::constraints::list(session)?;
    let indexes = grafeo_indexes(session)?;
    let schema = schema_text(&create.label, &create.properties);
    let same_schema = |label: &str, properties: &[String]| {
        label == create.label && properties == create.properties.as_slice()
    };
    if constraints
        .iter()
        .any(|c| same_schema(&c.label, &c.properties))
    {
        if create.if_not_exists {
            return Ok(IndexVerdict::Nothing);
        }
        return Err(Neo4jError::new(
            400,
            "Neo.ClientError.Schema.ConstraintAlreadyExists",
            format!(
                "There is a uniqueness constraint on {schema}, so an index is already created that matches this."
            ),
        ));
    }
    let position = indexes
        .iter()
        .position(|i| i.kind == "RANGE" && same_schema(&i.label, &i.properties));
    if let Some(at) = position {
        if create.if_not_exists {
            return Ok(IndexVerdict::Nothing);
        }
        let existing = &indexes[at];
        // Unnamed, the index gets Grafeo's generated name.
        let generated = format!("{}_{}_index", create.label, create.properties.join("_"));
        if create.name.as_ref().unwrap_or(&generated) == &existing.name {
            return Err(Neo4jError::new(
                400,
                "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists",
                format!(
                    "An equivalent index already exists, 'Index( id={}, name='{}', type='RANGE', schema={schema}, indexProvider='range-1.0' )'.",
                    all_indexes(session)?
                        .iter()
                        .position(|i| i.name == existing.name)
                        .unwrap_or(at)
                        + 1,
                    existing.name
                ),
            ));
        }
        return Err(Neo4jError::new(
            400,
            "Neo.ClientError.Schema.IndexAlreadyExists",
            format!("There already exists an index {schema}."),
        ));
    }
    if let Some(name) = &create.name {
        let index_named = indexes.iter().any(|i| &i.name == name);
        let constraint_named = constraints.iter().any(|c| &c.name == name);
        if (index_named || constraint_named) && create.if_not_exists {
            return Ok(IndexVerdict::Nothing);
        }
        if index_named {
            return Err(index_name_taken(name));
        }
        if constraint_named {
            return Err(Neo4jError::new(
                400,
                "Neo.ClientError.Schema.ConstraintWithNameAlreadyExists",
                format!("There already exists a constraint called '{name}'."),
            ));
        }
    }
    let properties: Vec<String> = create
        .properties
        .iter()
        .map(|p| format!("n.{}", quote(p)))
        .collect();
    Ok(IndexVerdict::Create(format!(
        "CREATE INDEX {}FOR (n:{}) ON ({})",
        create
            .name
            .as_ref()
            .map_or_else(String::new, |n| format!("{} ", quote(n))),
        quote(&create.label),
        properties.join(", ")
    )))
}

/// Neo4j 5's columns of `SHOW INDEXES`, in its order (observed on 5.26).
pub const SHOW_COLUMNS: &[&str] = &[
    "id",
    "name",
    "state",
    "populationPercent",
    "type",
    "entityType",
    "labelsOrTypes",
    "properties",
    "indexProvider",
    "owningConstraint",
    "lastRead",
    "readCount",
];

/// The two token-lookup indexes every Neo4j 5 database is created with, as 5.26 lists them
/// (their names are derived from their schema, the same on every server).
fn lookup_rows() -> [Json; 2] {
    [
        ("index_343aff4e", "NODE"),
        ("index_f7700477", "RELATIONSHIP"),
    ]
    .map(|(name, entity)| {
        json!({
            "name": name,
            "type": "LOOKUP",
            "state": "ONLINE",
            "populationPercent": 100.0,
            "entityType": entity,
            "labelsOrTypes": null,
            "properties": null,
            "indexProvider": "token-lookup-1.0",
            "owningConstraint": null,
            "lastRead": null,
            "readCount": 0,
        })
    })
}

/// Every index as `SHOW INDEXES` lists it: the token-lookup ones, Grafeo's, the
/// constraints' and `extra` (devgraph's full-text indexes), sorted by name and numbered
/// from 1 in that order.
pub fn show_rows(session: &Session, extra: Vec<Json>) -> Result<Vec<Json>, Neo4jError> {
    let mut rows: Vec<Json> = lookup_rows().into_iter().collect();
    rows.extend(all_indexes(session)?.iter().map(|i| {
        json!({
            "name": i.name,
            "type": i.kind,
            "state": "ONLINE",
            "populationPercent": 100.0,
            "entityType": "NODE",
            "labelsOrTypes": [i.label],
            "properties": i.properties,
            "indexProvider": i.provider(),
            "owningConstraint": i.owning_constraint,
            "lastRead": null,
            "readCount": null,
        })
    }));
    rows.extend(extra);
    rows.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    for (n, row) in rows.iter_mut().enumerate() {
        row["id"] = json!(n as i64 + 1);
    }
    Ok(rows)
}

/// `SHOW [kind] INDEXES <rest>`: the statement over the rows, and the rows (see
/// [`show_rows`]; `extra`: devgraph's full-text indexes).
pub fn show(
    session: &Session,
    kind: Option<&str>,
    rest: &str,
    extra: Vec<Json>,
) -> Result<(String, Json), Neo4jError> {
    let rows: Vec<Json> = show_rows(session, extra)?
        .into_iter()
        .filter(|row| kind.is_none_or(|k| row["type"] == k))
        .collect();
    let statement = schema::rows_statement("SHOW INDEXES", SHOW_COLUMNS, rest)?;
    Ok((statement, Json::Array(rows)))
}
