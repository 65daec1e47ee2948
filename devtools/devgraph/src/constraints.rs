//! Neo4j's uniqueness constraints on Grafeo's own (issue #15).
//!
//! Grafeo enforces unique and node-key constraints natively — a write that would give two
//! nodes of the label the same value fails, and the statement applies nothing; two
//! transactions writing the same value conflict — and keeps them in its file with the
//! graph (`--data`). What Neo4j does around them, devgraph does here:
//! - `CREATE CONSTRAINT [name] [IF NOT EXISTS] FOR (n:L) REQUIRE n.p IS [NODE] UNIQUE`
//!   (or `(n.p, n.q)`, or `IS NODE KEY`): fails with `ConstraintCreationFailed` over
//!   existing duplicates, with `EquivalentSchemaRuleAlreadyExists`,
//!   `ConstraintWithNameAlreadyExists` or `ConstraintAlreadyExists` without
//!   `IF NOT EXISTS` as Neo4j 5 does (with it: nothing happens), and counts
//!   `constraintsAdded`;
//! - `DROP CONSTRAINT name [IF EXISTS]`: `ConstraintDropFailed` for an unknown name without
//!   `IF EXISTS`, counts `constraintsRemoved`;
//! - `SHOW [ALL|UNIQUE|KEY] CONSTRAINT[S] [YIELD …] [WHERE …] [RETURN …]`: Neo4j 5's columns
//!   (`id`, `name`, `type` `UNIQUENESS`/`NODE_KEY`, `entityType`, `labelsOrTypes`,
//!   `properties`, `ownedIndex`, `propertyType`);
//! - plain `CREATE INDEX` and `SHOW INDEXES` are parsed here too and answered by
//!   [`crate::schema_rules`] (a constraint over a plain index is refused there).

use crate::errors::{Neo4jError, from_grafeo};
use crate::schema;
use grafeo::Value;
use grafeo::session::Session;
use serde_json::{Value as Json, json};

#[derive(Debug, Clone, PartialEq)]
pub struct Constraint {
    pub name: String,
    /// Grafeo's kind: `UNIQUE` or `NODE KEY`.
    pub kind: String,
    pub label: String,
    pub properties: Vec<String>,
}

impl Constraint {
    fn neo4j_type(&self) -> &'static str {
        if self.kind.eq_ignore_ascii_case("NODE KEY") {
            "NODE_KEY"
        } else {
            "UNIQUENESS"
        }
    }

    fn describe(&self) -> String {
        format!(
            "Constraint( name='{}', type='{}', schema=(:{} {{{}}}) )",
            self.name,
            self.neo4j_type(),
            self.label,
            self.properties.join(", ")
        )
    }

    fn same_schema(&self, other: &Constraint) -> bool {
        self.label == other.label
            && self.properties == other.properties
            && self.neo4j_type() == other.neo4j_type()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Ddl {
    Create {
        constraint: Constraint,
        named: bool,
        if_not_exists: bool,
    },
    Drop {
        name: String,
        if_exists: bool,
    },
    Show {
        rest: String,
    },
    /// `SHOW [ALL|RANGE|VECTOR|FULLTEXT] INDEX[ES] …` (see [`crate::schema_rules`]).
    ShowIndexes {
        /// Neo4j's index type asked for; `None`: all.
        kind: Option<&'static str>,
        rest: String,
    },
    /// A plain `CREATE [RANGE] INDEX … FOR (n:L) ON (n.p, …)`.
    CreateIndex(crate::schema_rules::CreateIndex),
}

fn words(statement: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    for c in statement.chars() {
        match c {
            '`' => {
                quoted = !quoted;
                current.push(c);
            }
            c if quoted => current.push(c),
            c if c.is_whitespace() => {
                if !current.is_empty() {
                    out.push(std::mem::take(&mut current));
                }
            }
            '(' | ')' | ',' | ':' | '.' | ';' => {
                if !current.is_empty() {
                    out.push(std::mem::take(&mut current));
                }
                out.push(c.to_string());
            }
            c => current.push(c),
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// Whether the statement's first word (its leading letters, digits and `_`) is one of
/// `keywords` (upper case), in any case. Every first word [`words`] or
/// `indexes::tokens` can split off starts with that run, so a statement this refuses is
/// one they would not match either.
pub fn starts_with_any(statement: &str, keywords: &[&str]) -> bool {
    let text = statement.trim_start();
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    let first = &text[..end];
    keywords.iter().any(|k| first.eq_ignore_ascii_case(k))
}

fn name(word: &str) -> String {
    word.strip_prefix('`')
        .and_then(|w| w.strip_suffix('`'))
        .map_or_else(|| word.to_string(), |w| w.replace("``", "`"))
}

fn is(word: Option<&String>, expected: &str) -> bool {
    word.is_some_and(|w| w.eq_ignore_ascii_case(expected))
}

fn syntax(message: impl Into<String>) -> Neo4jError {
    schema::syntax(message.into())
}

/// `SHOW [kind] INDEX[ES] <rest>`.
fn show_indexes(trimmed: &str, upper: &[String]) -> Option<Ddl> {
    let (kind, at) = match upper.get(1).map(String::as_str)? {
        "INDEX" | "INDEXES" => (None, 1),
        "ALL" => (None, 2),
        "RANGE" | "BTREE" => (Some("RANGE"), 2),
        "VECTOR" => (Some("VECTOR"), 2),
        "FULLTEXT" => (Some("FULLTEXT"), 2),
        // Kinds devgraph never has: an empty list.
        "TEXT" | "POINT" | "LOOKUP" => (Some("NONE"), 2),
        _ => return None,
    };
    if !matches!(upper.get(at).map(String::as_str), Some("INDEX" | "INDEXES")) {
        return None;
    }
    // The text after the INDEX(ES) word.
    let mut rest = trimmed;
    for _ in 0..=at {
        rest = rest.trim_start();
        rest = rest.find(char::is_whitespace).map_or("", |i| &rest[i..]);
    }
    Some(Ddl::ShowIndexes {
        kind,
        rest: rest.trim().to_string(),
    })
}

/// `FOR ( v : Label ) KEYWORD v.p` or `… KEYWORD (v.p, v.q)` from `w[i]` on (`KEYWORD`:
/// `ON` for an index, `REQUIRE` for a constraint): the label, the properties, and where
/// the words after them start; `None` for any other shape.
fn label_schema(w: &[String], mut i: usize, keyword: &str) -> Option<(String, Vec<String>, usize)> {
    if !is(w.get(i), "FOR") || w.get(i + 1).map(String::as_str) != Some("(") {
        return None;
    }
    let variable = w.get(i + 2)?;
    if w.get(i + 3).map(String::as_str) != Some(":") {
        return None;
    }
    let label = name(w.get(i + 4)?);
    if w.get(i + 5).map(String::as_str) != Some(")") || !is(w.get(i + 6), keyword) {
        return None;
    }
    i += 7;
    let parenthesised = w.get(i).map(String::as_str) == Some("(");
    if parenthesised {
        i += 1;
    }
    let mut properties = Vec::new();
    loop {
        if w.get(i) != Some(variable) || w.get(i + 1).map(String::as_str) != Some(".") {
            return None;
        }
        properties.push(name(w.get(i + 2)?));
        i += 3;
        if w.get(i).map(String::as_str) == Some(",") {
            i += 1;
            continue;
        }
        break;
    }
    if parenthesised {
        if w.get(i).map(String::as_str) != Some(")") {
            return None;
        }
        i += 1;
    }
    Some((label, properties, i))
}

/// A plain `CREATE [RANGE] INDEX [name] [IF NOT EXISTS] FOR (n:L) ON (n.p, …)`; other
/// shapes (relationship indexes, OPTIONS) are left to Grafeo.
fn create_index(w: &[String]) -> Option<crate::schema_rules::CreateIndex> {
    let mut i = 1;
    if is(w.get(i), "RANGE") || is(w.get(i), "BTREE") {
        i += 1;
    }
    if !is(w.get(i), "INDEX") {
        return None;
    }
    i += 1;
    let mut index_name = None;
    if !is(w.get(i), "IF") && !is(w.get(i), "FOR") {
        index_name = Some(name(w.get(i)?));
        i += 1;
    }
    let mut if_not_exists = false;
    if is(w.get(i), "IF") {
        if !(is(w.get(i + 1), "NOT") && is(w.get(i + 2), "EXISTS")) {
            return None;
        }
        if_not_exists = true;
        i += 3;
    }
    let (label, properties, next) = label_schema(w, i, "ON")?;
    let i = next;
    if w[i..].iter().any(|s| s != ";") {
        return None;
    }
    Some(crate::schema_rules::CreateIndex {
        name: index_name,
        if_not_exists,
        label,
        properties,
    })
}

/// The constraint DDL `statement` is, if it is one.
pub fn parse(statement: &str) -> Result<Option<Ddl>, Neo4jError> {
    let trimmed = statement.trim();
    // Every statement passes here; only DDL starts with one of these words. Splitting the
    // whole text into words first cost a large write statement a sixth of its planning.
    if !starts_with_any(trimmed, &["SHOW", "CREATE", "DROP"]) {
        return Ok(None);
    }
    let w = words(trimmed);
    let upper: Vec<String> = w.iter().take(4).map(|s| s.to_ascii_uppercase()).collect();
    let first = upper.first().map(String::as_str);
    if first == Some("SHOW")
        && let Some(ddl) = show_indexes(trimmed, &upper)
    {
        return Ok(Some(ddl));
    }
    if first == Some("CREATE")
        && let Some(create) = create_index(&w)
    {
        return Ok(Some(Ddl::CreateIndex(create)));
    }
    if first == Some("SHOW") {
        let mut i = 1;
        while i < upper.len() && matches!(upper[i].as_str(), "ALL" | "UNIQUE" | "KEY" | "NODE") {
            i += 1;
        }
        if !matches!(
            upper.get(i).map(String::as_str),
            Some("CONSTRAINT" | "CONSTRAINTS")
        ) {
            return Ok(None);
        }
        // The text after the CONSTRAINT(S) word.
        let upper_text = trimmed.to_ascii_uppercase();
        let at = upper_text.find("CONSTRAINT").unwrap_or(0);
        let after = &trimmed[at..];
        let after = after
            .find(char::is_whitespace)
            .map_or("", |i| after[i..].trim());
        return Ok(Some(Ddl::Show {
            rest: after.to_string(),
        }));
    }
    if !matches!(first, Some("CREATE" | "DROP")) || !is(w.get(1), "CONSTRAINT") {
        return Ok(None);
    }
    if first == Some("DROP") {
        let Some(constraint) = w.get(2) else {
            return Err(syntax("DROP CONSTRAINT needs the constraint's name"));
        };
        let if_exists = is(w.get(3), "IF") && is(w.get(4), "EXISTS");
        return Ok(Some(Ddl::Drop {
            name: name(constraint),
            if_exists,
        }));
    }
    // CREATE CONSTRAINT [name] [IF NOT EXISTS] FOR ( v : L ) REQUIRE …
    let mut i = 2;
    let mut constraint_name = None;
    if !is(w.get(i), "IF") && !is(w.get(i), "FOR") && !is(w.get(i), "ON") {
        constraint_name = w.get(i).map(|s| name(s));
        i += 1;
    }
    let mut if_not_exists = false;
    if is(w.get(i), "IF") {
        if !(is(w.get(i + 1), "NOT") && is(w.get(i + 2), "EXISTS")) {
            return Err(syntax("expected IF NOT EXISTS"));
        }
        if_not_exists = true;
        i += 3;
    }
    let shape = || {
        syntax(
            "devgraph takes `CREATE CONSTRAINT [name] [IF NOT EXISTS] FOR (n:Label) REQUIRE n.p IS [NODE] UNIQUE` (or `(n.p, n.q)`, or `IS NODE KEY`)",
        )
    };
    let (label, properties, next) = label_schema(&w, i, "REQUIRE").ok_or_else(shape)?;
    let i = next;
    if !is(w.get(i), "IS") {
        return Err(shape());
    }
    let rest: Vec<String> = w[i + 1..]
        .iter()
        .filter(|s| s.as_str() != ";")
        .map(|s| s.to_ascii_uppercase())
        .collect();
    let kind = match rest.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["UNIQUE"] | ["NODE", "UNIQUE"] => "UNIQUE",
        ["NODE", "KEY"] | ["KEY"] => "NODE KEY",
        _ => return Err(shape()),
    };
    let named = constraint_name.is_some();
    let constraint = Constraint {
        name: constraint_name.unwrap_or_else(|| {
            format!(
                "constraint_{}_{}",
                label.to_ascii_lowercase(),
                properties.join("_").to_ascii_lowercase()
            )
        }),
        kind: kind.to_string(),
        label,
        properties,
    };
    Ok(Some(Ddl::Create {
        constraint,
        named,
        if_not_exists,
    }))
}

fn text(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(s)) => s.to_string(),
        Some(Value::List(items)) => items
            .iter()
            .map(|v| text(Some(v)))
            .collect::<Vec<_>>()
            .join(", "),
        Some(other) => format!("{other:?}"),
        None => String::new(),
    }
}

/// The constraints Grafeo holds.
pub fn list(session: &Session) -> Result<Vec<Constraint>, Neo4jError> {
    let result = session
        .execute_cypher("SHOW CONSTRAINTS")
        .map_err(|e| from_grafeo(&e))?;
    let column = |name: &str| result.columns.iter().position(|c| c == name);
    let (Some(n), Some(t), Some(l), Some(p)) = (
        column("name"),
        column("type"),
        column("label"),
        column("properties"),
    ) else {
        return Err(Neo4jError::new(
            500,
            "Neo.DatabaseError.General.UnknownError",
            format!(
                "Grafeo's SHOW CONSTRAINTS answered columns {:?}",
                result.columns
            ),
        ));
    };
    Ok(result
        .rows()
        .iter()
        .map(|row| Constraint {
            name: text(row.get(n)),
            kind: text(row.get(t)),
            label: text(row.get(l)),
            properties: text(row.get(p))
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect(),
        })
        .collect())
}

fn quote(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// The values two nodes share, and the nodes' ids.
type Duplicate = (Vec<Value>, Vec<Value>);

/// Two nodes that break `constraint` now, with the value they share.
fn duplicate(session: &Session, constraint: &Constraint) -> Result<Option<Duplicate>, Neo4jError> {
    let props: Vec<String> = constraint
        .properties
        .iter()
        .map(|p| format!("n.{}", quote(p)))
        .collect();
    let statement = format!(
        "MATCH (n:{}) WHERE {} WITH {}, collect(id(n)) AS ids WHERE size(ids) > 1 RETURN {}, ids LIMIT 1",
        quote(&constraint.label),
        props
            .iter()
            .map(|p| format!("{p} IS NOT NULL"))
            .collect::<Vec<_>>()
            .join(" AND "),
        props
            .iter()
            .enumerate()
            .map(|(i, p)| format!("{p} AS v{i}"))
            .collect::<Vec<_>>()
            .join(", "),
        (0..props.len())
            .map(|i| format!("v{i}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let result = session
        .execute_cypher(&statement)
        .map_err(|e| from_grafeo(&e))?;
    Ok(result.rows().first().map(|row| {
        let n = constraint.properties.len();
        let values = row.iter().take(n).cloned().collect();
        let ids = match row.get(n) {
            Some(Value::List(ids)) => ids.to_vec(),
            _ => Vec::new(),
        };
        (values, ids)
    }))
}

fn literal(value: &Value) -> String {
    match value {
        Value::String(s) => format!("'{s}'"),
        Value::Int64(i) => i.to_string(),
        Value::Float64(f) => f.to_string(),
        Value::Bool(b) => b.to_string(),
        other => format!("{other:?}"),
    }
}

/// Runs constraint DDL: `(constraintsAdded, constraintsRemoved)`, or the rows of `SHOW`.
pub enum Done {
    Counted {
        added: u64,
        removed: u64,
    },
    Show {
        statement: String,
        rows: Json,
    },
    /// Nothing to answer here: run this statement (Grafeo's DDL) instead.
    Run {
        statement: String,
    },
}

pub fn run(session: &Session, ddl: &Ddl) -> Result<Done, Neo4jError> {
    run_checked(session, ddl, true)
}

/// [`run`]; `check_indexes`: refuse a constraint over a plain index, as Neo4j does
/// ([`restore`] recreates constraints that exist already and skips it).
fn run_checked(session: &Session, ddl: &Ddl, check_indexes: bool) -> Result<Done, Neo4jError> {
    match ddl {
        Ddl::ShowIndexes { kind, rest } => {
            let (statement, rows) = crate::schema_rules::show(session, *kind, rest, Vec::new())?;
            return Ok(Done::Show { statement, rows });
        }
        Ddl::CreateIndex(create) => {
            return Ok(match crate::schema_rules::create_index(session, create)? {
                crate::schema_rules::IndexVerdict::Nothing => Done::Counted {
                    added: 0,
                    removed: 0,
                },
                crate::schema_rules::IndexVerdict::Create(statement) => Done::Run { statement },
            });
        }
        _ => {}
    }
    let existing = list(session)?;
    match ddl {
        Ddl::ShowIndexes { .. } | Ddl::CreateIndex(_) => {
            Err(Neo4jError::bad_request("index DDL is answered above"))
        }
        Ddl::Show { rest } => {
            let rows: Vec<Json> = existing
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    json!({
                        "id": i as i64 + 1,
                        "name": c.name,
                        "type": c.neo4j_type(),
                        "entityType": "NODE",
                        "labelsOrTypes": [c.label],
                        "properties": c.properties,
                        "ownedIndex": c.name,
                        "propertyType": null,
                    })
                })
                .collect();
            let columns = [
                "id",
                "name",
                "type",
                "entityType",
                "labelsOrTypes",
                "properties",
                "ownedIndex",
                "propertyType",
            ];
            let statement = schema::rows_statement("SHOW CONSTRAINTS", &columns, rest)?;
            Ok(Done::Show {
                statement,
                rows: Json::Array(rows),
            })
        }
        Ddl::Drop { name, if_exists } => {
            if !existing.iter().any(|c| &c.name == name) {
                if *if_exists {
                    return Ok(Done::Counted {
                        added: 0,
                        removed: 0,
                    });
                }
                return Err(Neo4jError::new(
                    400,
                    "Neo.ClientError.Schema.ConstraintDropFailed",
                    format!("Unable to drop constraint `{name}`: No such constraint {name}."),
                ));
            }
            session
                .execute_cypher(&format!("DROP CONSTRAINT {}", quote(name)))
                .map_err(|e| from_grafeo(&e))?;
            Ok(Done::Counted {
                added: 0,
                removed: 1,
            })
        }
        Ddl::Create {
            constraint,
            named,
            if_not_exists,
        } => {
            let nothing = Done::Counted {
                added: 0,
                removed: 0,
            };
            if let Some(same_name) = existing
                .iter()
                .find(|c| *named && c.name == constraint.name)
            {
                if *if_not_exists {
                    return Ok(nothing);
                }
                return Err(if same_name.same_schema(constraint) {
                    Neo4jError::new(
                        400,
                        "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists",
                        format!(
                            "An equivalent constraint already exists, '{}'.",
                            same_name.describe()
                        ),
                    )
                } else {
                    Neo4jError::new(
                        400,
                        "Neo.ClientError.Schema.ConstraintWithNameAlreadyExists",
                        format!(
                            "There already exists a constraint called '{}'.",
                            constraint.name
                        ),
                    )
                });
            }
            if let Some(same) = existing.iter().find(|c| c.same_schema(constraint)) {
                if *if_not_exists {
                    return Ok(nothing);
                }
                return Err(Neo4jError::new(
                    400,
                    "Neo.ClientError.Schema.ConstraintAlreadyExists",
                    format!("Constraint already exists: {}", same.describe()),
                ));
            }
            if check_indexes
                && let Some(blocked) = crate::schema_rules::constraint_blocked(
                    constraint,
                    *named,
                    &crate::schema_rules::grafeo_indexes(session)?,
                )
            {
                return Err(blocked);
            }
            if let Some((values, ids)) = duplicate(session, constraint)? {
                let node = |i: usize| ids.get(i).map(literal).unwrap_or_default();
                let shared = constraint
                    .properties
                    .iter()
                    .zip(&values)
                    .map(|(p, v)| format!("property `{p}` = {}", literal(v)))
                    .collect::<Vec<_>>()
                    .join(" and ");
                return Err(Neo4jError::new(
                    400,
                    "Neo.ClientError.Schema.ConstraintCreationFailed",
                    format!(
                        "Unable to create {}:\nBoth Node({}) and Node({}) have the label `{}` and {shared}",
                        constraint.describe(),
                        node(0),
                        node(1),
                        constraint.label
                    ),
                ));
            }
            let props: Vec<String> = constraint
                .properties
                .iter()
                .map(|p| format!("n.{}", quote(p)))
                .collect();
            let ddl = format!(
                "CREATE CONSTRAINT {} FOR (n:{}) REQUIRE ({}) IS {}",
                quote(&constraint.name),
                quote(&constraint.label),
                props.join(", "),
                constraint.kind
            );
            let ddl = if props.len() == 1 {
                ddl.replace(&format!("({})", props[0]), &props[0])
            } else {
                ddl
            };
            session.execute_cypher(&ddl).map_err(|e| from_grafeo(&e))?;
            Ok(Done::Counted {
                added: 1,
                removed: 0,
            })
        }
    }
}

/// Gives every single-property constraint a Grafeo property index on its property, as
/// Neo4j backs each uniqueness constraint with an index. Grafeo checks a unique key by
/// scanning every node of the label unless the property is indexed, which made each write
/// cost O(nodes of the label): paying 1,000 orders into an action log of 10,000 entries
/// took 2.4 times as long. The index is Grafeo's own lookup structure (per property, for
/// all labels), so it adds no rule Neo4j would not have; it is not dropped with the
/// constraint, since a plain index on the same property of another label may use it.
pub fn ensure_backing_indexes(db: &grafeo::GrafeoDB, session: &Session) -> Result<(), Neo4jError> {
    for constraint in list(session)? {
        if let [property] = constraint.properties.as_slice()
            && !db.has_property_index(property)
        {
            db.create_property_index(property)
                .map_err(|e| from_grafeo(&e))?;
        }
    }
    Ok(())
}

/// Writes the constraints Grafeo holds to `file` (JSON), so a devgraph killed before
/// Grafeo checkpointed its schema gets them back ([`restore`]).
pub fn save(session: &Session, file: &std::path::Path) -> Result<(), Neo4jError> {
    let constraints: Vec<Json> = list(session)?
        .iter()
        .map(|c| json!({"name": c.name, "kind": c.kind, "label": c.label, "properties": c.properties}))
        .collect();
    let text = Json::Array(constraints).to_string();
    let temporary = file.with_extension("tmp");
    std::fs::write(&temporary, text)
        .and_then(|()| std::fs::rename(&temporary, file))
        .map_err(|e| {
            Neo4jError::new(
                500,
                "Neo.DatabaseError.General.UnknownError",
                format!("could not save the constraints to {}: {e}", file.display()),
            )
        })
}

/// Creates (again) the constraints saved in `file`; how many.
pub fn restore(session: &Session, file: &std::path::Path) -> Result<usize, String> {
    let Ok(text) = std::fs::read_to_string(file) else {
        return Ok(0);
    };
    let saved: Vec<Json> =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", file.display()))?;
    let held = list(session).map_err(|e| e.message)?;
    let mut restored = 0;
    for c in saved {
        let constraint = Constraint {
            name: c["name"].as_str().unwrap_or_default().to_string(),
            kind: c["kind"].as_str().unwrap_or("UNIQUE").to_string(),
            label: c["label"].as_str().unwrap_or_default().to_string(),
            properties: c["properties"]
                .as_array()
                .map(|p| {
                    p.iter()
                        .filter_map(|p| p.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default(),
        };
        if constraint.name.is_empty() {
            continue;
        }
        // Grafeo recovering from a kill can list a constraint it no longer enforces:
        // create each one afresh.
        if held.iter().any(|h| h.name == constraint.name) {
            session
                .execute_cypher(&format!("DROP CONSTRAINT {}", quote(&constraint.name)))
                .map_err(|e| e.to_string())?;
        }
        let ddl = Ddl::Create {
            constraint,
            named: true,
            if_not_exists: true,
        };
        run_checked(session, &ddl, false).map_err(|e| e.message)?;
        restored += 1;
    }
    Ok(restored)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_neo4j_constraint_ddl() {
        let Ok(Some(Ddl::Create {
            constraint,
            named,
            if_not_exists,
        })) = parse(
            "CREATE CONSTRAINT `kg_x` IF NOT EXISTS FOR (n:`ActionLog`) REQUIRE n.`id` IS UNIQUE",
        )
        else {
            panic!()
        };
        assert!(named && if_not_exists);
        assert_eq!(constraint.name, "kg_x");
        assert_eq!(constraint.label, "ActionLog");
        assert_eq!(constraint.properties, vec!["id"]);
        let Ok(Some(Ddl::Create { constraint, .. })) =
            parse("create constraint FOR (p:Pair) REQUIRE (p.a, p.b) IS NODE KEY")
        else {
            panic!()
        };
        assert_eq!(constraint.properties, vec!["a", "b"]);
        assert_eq!(constraint.neo4j_type(), "NODE_KEY");
        assert_eq!(
            parse("DROP CONSTRAINT x IF EXISTS").unwrap(),
            Some(Ddl::Drop {
                name: "x".into(),
                if_exists: true
            })
        );
        assert_eq!(
            parse("SHOW CONSTRAINTS YIELD name RETURN name").unwrap(),
            Some(Ddl::Show {
                rest: "YIELD name RETURN name".into()
            })
        );
        assert_eq!(parse("MATCH (n) RETURN n").unwrap(), None);
        assert_eq!(parse("CREATE (n:Constraint)").unwrap(), None);
        assert!(parse("CREATE CONSTRAINT x FOR (n:L) REQUIRE n.p IS NOT NULL").is_err());
    }

    #[test]
    fn only_a_ddl_first_word_is_parsed_further() {
        let ddl = ["SHOW", "CREATE", "DROP"];
        assert!(starts_with_any("  \n create(n)", &ddl));
        assert!(starts_with_any("Show constraints", &ddl));
        assert!(!starts_with_any("CREATED (n)", &ddl));
        assert!(!starts_with_any("UNWIND $x AS x CREATE CONSTRAINT", &ddl));
        assert!(!starts_with_any("`CREATE`", &ddl));
        assert!(!starts_with_any("", &ddl));
        // A data statement that only contains DDL words later is not DDL.
        assert_eq!(
            parse("UNWIND [1] AS x CREATE CONSTRAINT c FOR (n:L) REQUIRE n.p IS UNIQUE").unwrap(),
            None
        );
        assert!(matches!(
            parse("\tcreate constraint c for (n:L) require n.p is unique"),
            Ok(Some(Ddl::Create { .. }))
        ));
    }

    #[test]
    fn parses_plain_index_ddl_and_show_indexes() {
        let Ok(Some(Ddl::CreateIndex(create))) =
            parse("CREATE INDEX `kg_a` IF NOT EXISTS FOR (n:`ActionLog`) ON (n.`execution_key`)")
        else {
            panic!()
        };
        assert_eq!(create.name.as_deref(), Some("kg_a"));
        assert!(create.if_not_exists);
        assert_eq!(create.label, "ActionLog");
        assert_eq!(create.properties, vec!["execution_key"]);
        let Ok(Some(Ddl::CreateIndex(create))) =
            parse("create range index for (p:Pair) on (p.a, p.b)")
        else {
            panic!()
        };
        assert_eq!(
            (create.name, create.properties),
            (None, vec!["a".into(), "b".into()])
        );
        // Left to Grafeo (or to indexes.rs).
        assert_eq!(
            parse("CREATE INDEX r FOR ()-[r:T]-() ON (r.p)").unwrap(),
            None
        );
        assert_eq!(
            parse("CREATE VECTOR INDEX v FOR (c:C) ON c.e").unwrap(),
            None
        );
        assert_eq!(
            parse("SHOW RANGE INDEXES YIELD name WHERE name = 'x' RETURN name").unwrap(),
            Some(Ddl::ShowIndexes {
                kind: Some("RANGE"),
                rest: "YIELD name WHERE name = 'x' RETURN name".into()
            })
        );
        assert_eq!(
            parse("SHOW INDEXES").unwrap(),
            Some(Ddl::ShowIndexes {
                kind: None,
                rest: String::new()
            })
        );
    }
}
