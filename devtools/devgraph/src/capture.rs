//! Statement capture for the Cypher lint gate (issue #15, `tools/cypher-lint`): with
//! `--capture-dir` (or `DEVGRAPH_CAPTURE_DIR`), every distinct statement text devgraph
//! receives — auto-commit, opening, inside and committing explicit transactions — is
//! appended, exactly as received (before any rewriting devgraph does), to
//! `statements-<pid>.jsonl` in that folder: one JSON string per line, each text once per
//! process. Lines are written one `write` each as they arrive, so a devgraph a test kills
//! (SIGKILL) leaves complete lines behind.
//!
//! Only the **application's** statements belong to the gate. Cypher that users, the LLM or
//! the tests write goes to `excluded-<pid>.jsonl` instead (one JSON object per line, with
//! the reason), so what was left out can be audited:
//! - `run_read_cypher` input. That tool (kg-graph-tools `read_cypher.rs` + `explain.rs`)
//!   always asks the graph for `EXPLAIN <text>` in READ mode before it runs `<text>` (or
//!   `PROFILE <text>`) in READ mode; the application sends `EXPLAIN` for nothing else. So an
//!   `EXPLAIN …` statement is foreign, its text is remembered, and a later READ statement
//!   equal to a remembered text (or `PROFILE` + it) is foreign too. The run always follows
//!   its EXPLAIN in the same tool call, so the order is guaranteed. (The one blind spot: an
//!   application statement whose text a test also sent through `run_read_cypher` before
//!   it, in READ mode, would be left out.)
//! - Statements a test sends straight to devgraph to set up or check its data: the test
//!   harness marks them with the request header `x-devgraph-capture: test`
//!   ([`TEST_HEADER`]); and whatever does not come from the application's Neo4j client
//!   (`neo4j-client`), which always asks for the typed format (`Accept:
//!   application/vnd.neo4j.query, …`), while tests that build requests by hand (reqwest,
//!   ureq) send no such `Accept`. Should the client ever stop asking for it, nothing is
//!   captured and the lint gate fails on an empty capture: loudly, not silently.
//!
//! Every request of the query endpoints, the test's own included, is also appended to
//! `requests-<pid>.jsonl`, one JSON object per line with the columns of
//! `CALL devgraph.requests()` (see [`crate::requests`]): its kind, statement, access mode,
//! transaction, the bookmarks it sent and the bookmark its answer carried, its status.

use serde_json::json;
use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// The request header (value `test`) that marks a statement as the test's own.
pub const TEST_HEADER: &str = "x-devgraph-capture";

/// What devgraph knows about where a statement came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Received {
    /// Sent in READ access mode.
    pub read: bool,
    /// The request carried `x-devgraph-capture: test`.
    pub marked_test: bool,
    /// The request asked for the typed format, as the application's client always does.
    pub typed: bool,
}

/// Where one process's captured statements go.
pub struct Capture {
    statements_path: PathBuf,
    state: Mutex<State>,
}

struct State {
    statements: File,
    excluded: File,
    requests: File,
    seen: HashSet<String>,
    seen_excluded: HashSet<String>,
    /// The texts `run_read_cypher` asked the graph to EXPLAIN.
    explained: HashSet<String>,
}

impl Capture {
    /// Opens (appending) this process's files in `dir`, creating the folder if needed.
    pub fn open(dir: &Path) -> io::Result<Capture> {
        std::fs::create_dir_all(dir)?;
        let pid = std::process::id();
        let statements_path = dir.join(format!("statements-{pid}.jsonl"));
        let append = |path: &Path| OpenOptions::new().create(true).append(true).open(path);
        let statements = append(&statements_path)?;
        let excluded = append(&dir.join(format!("excluded-{pid}.jsonl")))?;
        let requests = append(&dir.join(format!("requests-{pid}.jsonl")))?;
        Ok(Capture {
            statements_path,
            state: Mutex::new(State {
                statements,
                excluded,
                requests,
                seen: HashSet::new(),
                seen_excluded: HashSet::new(),
                explained: HashSet::new(),
            }),
        })
    }

    /// The file the application's statements go to.
    pub fn path(&self) -> &Path {
        &self.statements_path
    }

    /// Records one received statement (see the module comment for what is excluded).
    pub fn observe(&self, statement: &str, received: Received) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let reason = if received.marked_test {
            Some("test")
        } else if let Some(text) = strip_keyword(statement, "EXPLAIN") {
            // Before the client check: run_read_cypher sends its EXPLAIN itself.
            state.explained.insert(text.to_string());
            Some("run_read_cypher")
        } else if !received.typed {
            Some("not neo4j-client")
        } else if received.read
            && (state.explained.contains(statement.trim_start())
                || strip_keyword(statement, "PROFILE")
                    .is_some_and(|text| state.explained.contains(text)))
        {
            Some("run_read_cypher")
        } else {
            None
        };
        let result = match reason {
            None => {
                if !state.seen.insert(statement.to_string()) {
                    return;
                }
                let line = format!("{}\n", json!(statement));
                state.statements.write_all(line.as_bytes())
            }
            Some(reason) => {
                if !state.seen_excluded.insert(statement.to_string()) {
                    return;
                }
                let line = format!("{}\n", json!({"reason": reason, "statement": statement}));
                state.excluded.write_all(line.as_bytes())
            }
        };
        if let Err(e) = result {
            eprintln!("devgraph: statement capture failed: {e}");
        }
    }
}

impl Capture {
    /// Appends one request's row (see [`crate::requests`]).
    pub fn record_request(&self, row: &serde_json::Value) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let line = format!("{row}\n");
        if let Err(e) = state.requests.write_all(line.as_bytes()) {
            eprintln!("devgraph: request capture failed: {e}");
        }
    }
}

/// `text` without a leading keyword (any case) and the whitespace after it.
fn strip_keyword<'a>(text: &'a str, keyword: &str) -> Option<&'a str> {
    let trimmed = text.trim_start();
    let head = trimmed.get(..keyword.len())?;
    let rest = &trimmed[keyword.len()..];
    (head.eq_ignore_ascii_case(keyword) && rest.starts_with(char::is_whitespace))
        .then(|| rest.trim_start())
}

static CAPTURE: OnceLock<Capture> = OnceLock::new();

/// Turns capture on for this process; returns the statements file.
pub fn install(dir: &Path) -> io::Result<PathBuf> {
    let capture = Capture::open(dir)?;
    let path = capture.path().to_path_buf();
    let _ = CAPTURE.set(capture);
    Ok(path)
}

/// Whether a request carries the test marker ([`TEST_HEADER`]`: test`).
pub fn marked_test(headers: &hyper::HeaderMap) -> bool {
    headers
        .get(TEST_HEADER)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"test"))
}

/// Records a request's row when capture is on (a no-op otherwise).
pub fn record_request(row: &serde_json::Value) {
    if let Some(capture) = CAPTURE.get() {
        capture.record_request(row);
    }
}

/// Records a statement when capture is on (a no-op otherwise).
pub fn observe(statement: &str, received: Received) {
    if let Some(capture) = CAPTURE.get() {
        capture.observe(statement, received);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const APP: Received = Received {
        read: false,
        marked_test: false,
        typed: true,
    };
    const READ: Received = Received {
        read: true,
        marked_test: false,
        typed: true,
    };

    fn lines(path: &Path) -> Vec<serde_json::Value> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn keeps_each_application_statement_once_and_leaves_out_the_foreign_ones() {
        let dir = tempfile::tempdir().unwrap();
        let capture = Capture::open(dir.path()).unwrap();
        capture.observe("MATCH (n) RETURN n", APP);
        capture.observe("MATCH (n) RETURN n", APP);
        capture.observe("CALL db.labels() YIELD label RETURN label", READ);
        // run_read_cypher: EXPLAIN first, then the run (plain and PROFILE).
        let explain = Received {
            typed: false,
            ..READ
        };
        capture.observe("EXPLAIN MATCH (s:Supplier) RETURN s LIMIT 5", explain);
        capture.observe("MATCH (s:Supplier) RETURN s LIMIT 5", READ);
        capture.observe("explain  MATCH (p) RETURN p", explain);
        capture.observe("PROFILE MATCH (p) RETURN p", READ);
        // The same text in WRITE mode is not run_read_cypher's.
        capture.observe("MATCH (s:Supplier) RETURN s LIMIT 5", APP);
        capture.observe(
            "MATCH (o:PurchaseOrder) RETURN o",
            Received {
                marked_test: true,
                ..READ
            },
        );
        capture.observe(
            "UNWIND range(1, 10) AS x RETURN x",
            Received {
                typed: false,
                ..APP
            },
        );
        let kept = lines(capture.path());
        assert_eq!(
            kept,
            vec![
                json!("MATCH (n) RETURN n"),
                json!("CALL db.labels() YIELD label RETURN label"),
                json!("MATCH (s:Supplier) RETURN s LIMIT 5"),
            ]
        );
        let excluded = lines(
            &dir.path()
                .join(format!("excluded-{}.jsonl", std::process::id())),
        );
        let reasons: Vec<(&str, &str)> = excluded
            .iter()
            .map(|e| {
                (
                    e["reason"].as_str().unwrap(),
                    e["statement"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            reasons,
            vec![
                (
                    "run_read_cypher",
                    "EXPLAIN MATCH (s:Supplier) RETURN s LIMIT 5"
                ),
                ("run_read_cypher", "MATCH (s:Supplier) RETURN s LIMIT 5"),
                ("run_read_cypher", "explain  MATCH (p) RETURN p"),
                ("run_read_cypher", "PROFILE MATCH (p) RETURN p"),
                ("test", "MATCH (o:PurchaseOrder) RETURN o"),
                ("not neo4j-client", "UNWIND range(1, 10) AS x RETURN x"),
            ]
        );
    }

    #[test]
    fn keywords_are_whole_words() {
        assert_eq!(strip_keyword(" EXPLAIN\nMATCH", "EXPLAIN"), Some("MATCH"));
        assert_eq!(strip_keyword("EXPLAINX MATCH", "EXPLAIN"), None);
        assert_eq!(strip_keyword("EXPL", "EXPLAIN"), None);
        assert_eq!(strip_keyword("ÉXPLAIN MATCH", "EXPLAIN"), None);
    }
}
