//! The read-only guard for LLM- or user-written Cypher (DESIGN.md §4), first layer: a
//! lexer-based check that refuses writes, `LOAD CSV`, schema and admin commands, procedures
//! off the allow-list and multiple statements; collects the labels and relationship types
//! the query names (checked against the live schema by the caller); and enforces a LIMIT.
//! The second layer, an `EXPLAIN` round trip, is in `explain.rs`; the third is READ mode.

mod cost;
mod lexer;
mod limit;
mod names;
mod traversal;
mod visibility;

pub use cost::{MAX_HOPS, MAX_RANGE_ELEMENTS, MAX_RANGE_PRODUCT, TooExpensive};
pub use lexer::{Token, lex};
pub use traversal::{HIDDEN_LABELS, HIDDEN_TYPES, RESERVED_PREFIX};

use kg_graph_profile::View;

/// Procedures a read query may call: schema introspection only.
pub const ALLOWED_PROCEDURES: [&str; 6] = [
    "db.labels",
    "db.relationshipTypes",
    "db.propertyKeys",
    "db.schema.visualization",
    "db.schema.nodeTypeProperties",
    "db.schema.relTypeProperties",
];

/// Namespaces of Neo4j's built-in functions, which cannot write. Any other namespaced
/// function (`apoc.*`, user-defined) is refused.
const ALLOWED_FUNCTION_NAMESPACES: [&str; 9] = [
    "point",
    "vector",
    "date",
    "datetime",
    "localdatetime",
    "time",
    "localtime",
    "duration",
    "string",
];

/// Words that start a clause or command that writes, reads files, changes the schema or
/// administers the server. (A word after `.` or `:` is a property or a label, not these.)
const FORBIDDEN: [(&str, &str); 26] = [
    ("CREATE", "writes"),
    ("MERGE", "writes"),
    ("SET", "writes"),
    ("DELETE", "writes"),
    ("DETACH", "writes"),
    ("REMOVE", "writes"),
    ("FOREACH", "writes (FOREACH only holds updating clauses)"),
    ("INSERT", "writes"),
    ("LOAD", "reads files or URLs (LOAD CSV)"),
    ("DROP", "changes the schema"),
    ("ALTER", "administers the server"),
    ("RENAME", "administers the server"),
    ("GRANT", "administers the server"),
    ("REVOKE", "administers the server"),
    ("DENY", "administers the server"),
    ("SHOW", "is an administration command"),
    ("USE", "switches the database"),
    ("START", "administers the server"),
    ("STOP", "administers the server"),
    ("TERMINATE", "administers the server"),
    ("ENABLE", "administers the server"),
    ("DEALLOCATE", "administers the server"),
    (
        "TRANSACTIONS",
        "runs in separate transactions (CALL … IN TRANSACTIONS)",
    ),
    ("PERIODIC", "runs in separate transactions"),
    ("EXPLAIN", "is added by the guard itself"),
    (
        "PROFILE",
        "may only open the statement (`PROFILE MATCH … RETURN …`)",
    ),
];

/// Why a statement was refused; shown to the LLM so it can rewrite the query.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal(pub String);

/// What [`check`] refuses: a statement that is not a plain read, or one whose cost its
/// text does not bound.
#[derive(Debug, Clone, PartialEq)]
pub enum Rejection {
    Refused(Refusal),
    TooExpensive(TooExpensive),
}

impl Rejection {
    pub fn message(&self) -> &str {
        match self {
            Rejection::Refused(r) => &r.0,
            Rejection::TooExpensive(e) => &e.message,
        }
    }
}

impl From<Refusal> for Rejection {
    fn from(r: Refusal) -> Self {
        Rejection::Refused(r)
    }
}

/// A statement that passed the first layer.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked {
    /// The statement to run: comments removed, the LIMIT enforced.
    pub statement: String,
    pub labels: Vec<String>,
    pub relationship_types: Vec<String>,
    pub procedures: Vec<String>,
    /// The statement was written `PROFILE …`: `statement` is without the keyword (the
    /// caller plans it with EXPLAIN and runs it with PROFILE).
    pub profile: bool,
    /// Parameters the guard's rewrite adds (the hidden names its predicates compare
    /// with); empty without a policy.
    pub parameters: serde_json::Map<String, serde_json::Value>,
    /// Under a policy, the functions the statement calls (lower-case), which an error from
    /// the graph names instead of quoting the graph's message; empty without one.
    pub functions: Vec<String>,
}

/// Checks `statement` and enforces at most `max_rows + 1` rows per RETURN (the extra row
/// tells the caller the answer was cut), for a graph without a visibility policy.
pub fn check(statement: &str, max_rows: usize) -> Result<Checked, Rejection> {
    check_for(statement, max_rows, &View::open())
}

/// [`check`] for an audience: names it may not see, and (while the graph has a visibility
/// policy) dynamic property access, are refused as well (`visibility`).
pub fn check_for(statement: &str, max_rows: usize, view: &View) -> Result<Checked, Rejection> {
    let lexed = lex(statement).map_err(Refusal)?;
    let mut tokens = lexed.tokens;
    // `PROFILE <read>`: checked as the read it runs. Only as the first word: anywhere
    // else `PROFILE` is refused below.
    let profile = tokens
        .first()
        .is_some_and(|t| t.token.keyword().as_deref() == Some("PROFILE"));
    if profile {
        tokens.remove(0);
    }
    if tokens.last().is_some_and(|t| t.token.is_sym(';')) {
        tokens.pop();
    }
    if tokens.is_empty() {
        return Err(Refusal("the statement is empty".into()).into());
    }
    if tokens.iter().any(|t| t.token.is_sym(';')) {
        return Err(
            Refusal("only one statement may be sent: `;` separates statements".into()).into(),
        );
    }
    let kinds: Vec<&Token> = tokens.iter().map(|t| &t.token).collect();
    forbidden_words(&kinds)?;
    visibility::check(&kinds, view)?;
    let procedures = calls(&kinds)?;
    let (labels, relationship_types) = names::collect(&kinds);
    cost::check(&lexed.clean, &tokens).map_err(Rejection::TooExpensive)?;
    let statement = limit::enforce(&lexed.clean, &tokens, max_rows + 1)?;
    // Under a policy the statement is read by the grammar and, where labels or types are
    // hidden, rewritten so that hidden elements cannot bind (`traversal`).
    let (statement, parameters, functions) = if view.has_policy() {
        let rewritten = traversal::rewrite(&statement, view)?;
        (
            rewritten.statement,
            rewritten.parameters,
            rewritten.functions,
        )
    } else {
        (statement, serde_json::Map::new(), Vec::new())
    };
    Ok(Checked {
        statement,
        labels,
        relationship_types,
        procedures,
        profile,
        parameters,
        functions,
    })
}

fn forbidden_words(tokens: &[&Token]) -> Result<(), Refusal> {
    for (i, token) in tokens.iter().enumerate() {
        let Some(word) = token.keyword() else {
            continue;
        };
        let before = i.checked_sub(1).map(|j| tokens[j]);
        // `n.set`, `:Set` and `AS start` are names, not clauses.
        if before
            .is_some_and(|b| b.is_sym('.') || b.is_sym(':') || b.keyword().as_deref() == Some("AS"))
        {
            continue;
        }
        if let Some((_, why)) = FORBIDDEN.iter().find(|(w, _)| *w == word) {
            return Err(Refusal(format!(
                "`{word}` is not allowed in a read-only query: it {why} (a name spelt like it must be back-tick quoted: `{}`)",
                word.to_lowercase()
            )));
        }
    }
    Ok(())
}

/// A dotted name starting at `i` (`a.b.c`, parts bare or back-tick quoted): the name and
/// the index after it.
fn dotted(tokens: &[&Token], mut i: usize) -> Option<(String, usize)> {
    let mut parts = vec![tokens.get(i)?.name()?.to_string()];
    i += 1;
    while tokens.get(i).is_some_and(|t| t.is_sym('.')) {
        parts.push(tokens.get(i + 1)?.name()?.to_string());
        i += 2;
    }
    Some((parts.join("."), i))
}

/// Checks `CALL` clauses and namespaced function calls; returns the procedures called.
fn calls(tokens: &[&Token]) -> Result<Vec<String>, Refusal> {
    let mut procedures = Vec::new();
    for i in 0..tokens.len() {
        let before = i.checked_sub(1).map(|j| tokens[j]);
        if before.is_some_and(|b| b.is_sym('.') || b.is_sym(':')) {
            continue;
        }
        if tokens[i].keyword().as_deref() == Some("CALL") {
            match tokens.get(i + 1) {
                // A subquery: its clauses are checked like the rest of the statement.
                Some(t) if t.is_sym('{') => {}
                Some(t) if t.is_sym('(') => {
                    // `CALL (a, b) { … }`, a subquery importing variables.
                    let close = (i + 1..tokens.len()).find(|&j| tokens[j].is_sym(')'));
                    if !close.is_some_and(|j| tokens.get(j + 1).is_some_and(|t| t.is_sym('{'))) {
                        return Err(Refusal(
                            "`CALL (` must start a subquery `CALL (…) { … }`".into(),
                        ));
                    }
                }
                _ => {
                    let Some((name, _)) = dotted(tokens, i + 1) else {
                        return Err(Refusal(
                            "`CALL` must name a procedure or open a subquery".into(),
                        ));
                    };
                    if !ALLOWED_PROCEDURES.contains(&name.as_str()) {
                        return Err(Refusal(format!(
                            "procedure `{name}` is not allowed; allowed: {}",
                            ALLOWED_PROCEDURES.join(", ")
                        )));
                    }
                    procedures.push(name);
                }
            }
            continue;
        }
        // A function call `ns.name(`; a property access `n.name` is not followed by `(`.
        if tokens[i].name().is_some()
            && tokens.get(i + 1).is_some_and(|t| t.is_sym('.'))
            && !before.is_some_and(|b| b.keyword().as_deref() == Some("CALL"))
            && let Some((name, after)) = dotted(tokens, i)
            && tokens.get(after).is_some_and(|t| t.is_sym('('))
        {
            let namespace = name
                .split('.')
                .next()
                .unwrap_or_default()
                .to_ascii_lowercase();
            if !ALLOWED_FUNCTION_NAMESPACES.contains(&namespace.as_str()) {
                return Err(Refusal(format!(
                    "function `{name}` is not allowed: only built-in functions ({}.*) may be called",
                    ALLOWED_FUNCTION_NAMESPACES.join(".*, ")
                )));
            }
        }
    }
    Ok(procedures)
}

#[cfg(test)]
mod tests;
