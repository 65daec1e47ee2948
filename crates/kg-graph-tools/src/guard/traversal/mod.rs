//! The read-only guard's traversal layer: while the graph's profile declares a visibility
//! policy, a statement is parsed (`parser`, a recursive-descent reader of the read subset
//! of Cypher 5) and, where the audience may not see some label or relationship type,
//! rewritten so that hidden nodes and relationships cannot bind to any pattern: what Neo4j
//! Enterprise's fine-grained access control calls hiding from traversal, which Community
//! does not have.
//!
//! Every node and relationship pattern of every pattern scope — a `MATCH` or `OPTIONAL
//! MATCH` clause, a quantified path pattern's body, a pattern comprehension, an `EXISTS`,
//! `COUNT` or `COLLECT` subquery, a pattern used as a predicate (made an `EXISTS { }`), at
//! any depth, `CALL { }` and `UNION` branches included — gets a variable (a generated
//! `__kg_…` one when it had none) and a predicate in that scope's `WHERE`:
//! - a node: none of its labels is hidden;
//! - a relationship: its type is not hidden;
//! - a variable-length relationship (a list): each relationship's type and both of its
//!   ends, which covers the nodes a path walks through without naming them.
//!
//! A statement the parser cannot read is refused rather than sent: that is the price of
//! rewriting on the structure instead of the spelling. Refused while a policy hides a
//! label or type: `RETURN *` / `WITH *` once a variable was generated (it would become a
//! column), path selectors other than `shortestPath`/`allShortestPaths`, and syntax
//! outside the subset `parser` documents.
//!
//! Without a policy nothing here runs: statements go out exactly as before.

mod parser;
#[cfg(test)]
mod tests;

use super::Refusal;
use super::lexer::lex;
use kg_graph_profile::View;
use serde_json::{Map, Value as Json, json};

/// The parameters a rewritten statement passes the hidden names in. A caller's own
/// parameter or variable may not start with [`RESERVED_PREFIX`].
pub const HIDDEN_LABELS: &str = "__kg_hidden_labels";
pub const HIDDEN_TYPES: &str = "__kg_hidden_types";
pub const RESERVED_PREFIX: &str = "__kg";

/// A statement made safe for an audience: the text to run, the parameters it adds, and the
/// functions it calls (named in an error from the graph instead of the graph's message).
#[derive(Debug, Clone, PartialEq)]
pub struct Rewritten {
    pub statement: String,
    pub parameters: Map<String, Json>,
    pub functions: Vec<String>,
}

/// Parses `statement` and, where `view` hides labels or types, rewrites every pattern so
/// that nothing hidden can bind. Only called while the graph has a visibility policy.
pub fn rewrite(statement: &str, view: &View) -> Result<Rewritten, Refusal> {
    let lexed = lex(statement).map_err(Refusal)?;
    if let Some(name) = lexed
        .tokens
        .iter()
        .filter_map(|t| match &t.token {
            super::Token::Word(w) | super::Token::Quoted(w) | super::Token::Param(w) => Some(w),
            _ => None,
        })
        .find(|w| w.to_ascii_lowercase().starts_with(RESERVED_PREFIX))
    {
        return Err(Refusal(format!(
            "names starting with `{RESERVED_PREFIX}` are reserved for the guard (`{name}`)"
        )));
    }
    let predicates = Predicates {
        labels: !view.hidden_labels.is_empty(),
        types: !view.hidden_types.is_empty(),
    };
    let parsed = parser::parse(&lexed.clean, &lexed.tokens, predicates)?;
    let mut parameters = Map::new();
    if !parsed.edits.is_empty() {
        if predicates.labels {
            parameters.insert(HIDDEN_LABELS.into(), json!(view.hidden_labels));
        }
        if predicates.types {
            parameters.insert(HIDDEN_TYPES.into(), json!(view.hidden_types));
        }
    }
    Ok(Rewritten {
        statement: apply(&lexed.clean, parsed.edits),
        parameters,
        functions: parsed.functions,
    })
}

/// Which predicates patterns get.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Predicates {
    labels: bool,
    types: bool,
}

impl Predicates {
    pub(crate) fn any(&self) -> bool {
        self.labels || self.types
    }

    /// A node bound to `var` carries no hidden label.
    pub(crate) fn node(&self, var: &str) -> Option<String> {
        self.labels.then(|| no_hidden_label(var))
    }

    /// A relationship bound to `var` has no hidden type; or, for a variable-length one
    /// (a list), no relationship of it has, nor either of its ends a hidden label. With
    /// `named_types` the pattern names its types (visible ones: a hidden name is refused
    /// before this), so the type needs no check: on the scale-10 graph the check cost a
    /// third more time on a 2.5-million-relationship aggregation.
    pub(crate) fn relationship(
        &self,
        var: &str,
        variable_length: bool,
        named_types: bool,
    ) -> Option<String> {
        let check_type = self.types && !named_types;
        if !variable_length {
            return check_type.then(|| no_hidden_type(var));
        }
        let mut each = Vec::new();
        if check_type {
            each.push(no_hidden_type("__kg_x"));
        }
        if self.labels {
            each.push(no_hidden_label("startNode(__kg_x)"));
            each.push(no_hidden_label("endNode(__kg_x)"));
        }
        (!each.is_empty()).then(|| format!("all(__kg_x IN {var} WHERE {})", each.join(" AND ")))
    }
}

fn no_hidden_label(node: &str) -> String {
    format!("none(__kg_l IN labels({node}) WHERE __kg_l IN ${HIDDEN_LABELS})")
}

fn no_hidden_type(rel: &str) -> String {
    format!("NOT type({rel}) IN ${HIDDEN_TYPES}")
}

/// An insertion into the statement: at byte `at`, in the order emitted (an opening is
/// emitted before what it encloses, a closing after).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Edit {
    pub at: usize,
    pub text: String,
}

fn apply(clean: &str, mut edits: Vec<Edit>) -> String {
    // A stable sort keeps the emission order among insertions at one position.
    edits.sort_by_key(|e| e.at);
    let mut out =
        String::with_capacity(clean.len() + edits.iter().map(|e| e.text.len()).sum::<usize>());
    let mut from = 0;
    for edit in edits {
        out.push_str(&clean[from..edit.at]);
        out.push_str(&edit.text);
        from = edit.at;
    }
    out.push_str(&clean[from..]);
    out
}
