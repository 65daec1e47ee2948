//! What each request brought and got, for tests of the application's causal chains: the
//! last [`KEPT`] requests of the query endpoints, in memory, answered by
//! `CALL devgraph.requests()` (and written to `requests-<pid>.jsonl` in the capture folder
//! when there is one, see [`crate::capture`]).
//!
//! Each row: `seq` (1, 2, … in arrival order), `kind` (`auto-commit`, `begin`, `run`,
//! `commit`, `rollback`), `statement` (null for a request without one), `access_mode`
//! (`READ`/`WRITE`; a transaction's own for the requests inside it), `explicit` (inside an
//! explicit transaction), `transaction` (its id, or null), `bookmarks_in` (what the
//! request sent; for the requests of a transaction, what its begin sent), `bookmark_out`
//! (the bookmark the answer carried: auto-commit and commit; else null), `status` (the
//! HTTP status) and `error` (the Neo4j code, or null). Calls of `devgraph.requests` itself
//! are not recorded; `CALL devgraph.requests.clear()` forgets what was recorded.

use serde_json::{Value as Json, json};
use std::collections::VecDeque;
use std::sync::Mutex;

/// How many requests are kept.
pub const KEPT: usize = 1000;

/// The columns of `CALL devgraph.requests()`, in order.
pub const COLUMNS: &[&str] = &[
    "seq",
    "kind",
    "statement",
    "access_mode",
    "explicit",
    "transaction",
    "bookmarks_in",
    "bookmark_out",
    "status",
    "error",
];

#[derive(Debug, Clone, Default)]
pub struct Entry {
    pub kind: &'static str,
    pub statement: Option<String>,
    pub access_mode: &'static str,
    pub transaction: Option<String>,
    pub bookmarks_in: Vec<String>,
    pub bookmark_out: Option<String>,
    pub status: u16,
    pub error: Option<String>,
}

#[derive(Default)]
pub struct Requests {
    state: Mutex<(u64, VecDeque<Json>)>,
}

impl Requests {
    /// Records one request; returns its row.
    pub fn record(&self, entry: Entry) -> Json {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.0 += 1;
        let row = json!({
            "seq": state.0,
            "kind": entry.kind,
            "statement": entry.statement,
            "access_mode": entry.access_mode,
            "explicit": entry.transaction.is_some(),
            "transaction": entry.transaction,
            "bookmarks_in": entry.bookmarks_in,
            "bookmark_out": entry.bookmark_out,
            "status": entry.status,
            "error": entry.error,
        });
        if state.1.len() == KEPT {
            state.1.pop_front();
        }
        state.1.push_back(row.clone());
        row
    }

    /// The kept rows, oldest first.
    pub fn rows(&self) -> Vec<Json> {
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.1.iter().cloned().collect()
    }

    /// Forgets the kept rows (numbering goes on); how many there were.
    pub fn clear(&self) -> usize {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let n = state.1.len();
        state.1.clear();
        n
    }
}

/// Whether `statement` calls one of the `devgraph.requests` procedures (not recorded).
pub fn is_observation(statement: &str) -> bool {
    let words: Vec<String> = statement
        .split(|c: char| c.is_whitespace() || c == '(')
        .filter(|w| !w.is_empty())
        .take(2)
        .map(|w| w.replace('`', "").to_ascii_lowercase())
        .collect();
    words.first().map(String::as_str) == Some("call")
        && words
            .get(1)
            .is_some_and(|w| w == "devgraph.requests" || w == "devgraph.requests.clear")
}
