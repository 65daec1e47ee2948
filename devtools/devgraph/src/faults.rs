//! Transient-error injection, for tests of what clients do when Neo4j aborts a write.
//!
//! Neo4j aborts a writing transaction with a transient error when it breaks a deadlock
//! (`Neo.TransientError.Transaction.DeadlockDetected`) or stops a lock client
//! (`Neo.TransientError.Transaction.LockClientStopped`, e.g. a leader switch in a cluster).
//! devgraph serialises writes, so it never has to; with `--inject-transient <fraction>` (or
//! `DEVGRAPH_INJECT_TRANSIENT`) that fraction of the statements that write data fails with
//! one of those errors (`--inject-transient-codes` / `DEVGRAPH_INJECT_TRANSIENT_CODES`, comma
//! separated, both by default) **before** anything is applied, so the rollback a client
//! relies on is real. Statements that only read, and schema DDL (`CREATE INDEX`…), are
//! never failed. `DEVGRAPH_INJECT_SEED` makes the sequence of failures repeatable.
//!
//! `CALL devgraph.faults()` answers how many errors were injected and how many writes were
//! seen (`injected`, `writes`), so a test can show that retries really happened. On a
//! devgraph started with the flag (even at 0), `CALL devgraph.faults(<fraction>)` changes
//! the fraction from then on (a test sets its data up, then turns failures on).

use crate::errors::Neo4jError;
use grafeo::session::Session;
use serde_json::{Value as Json, json};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

pub const DEADLOCK: &str = "Neo.TransientError.Transaction.DeadlockDetected";
pub const LOCK_CLIENT_STOPPED: &str = "Neo.TransientError.Transaction.LockClientStopped";

/// The procedure that reports the counters (and changes the fraction).
const COUNTERS_PROCEDURE: &str = "devgraph.faults";

/// What to inject and what was injected.
pub struct Faults {
    /// Of 2^64: a write fails when its draw is below this (`u64::MAX`: every write).
    threshold: AtomicU64,
    codes: Vec<&'static str>,
    seed: u64,
    draws: AtomicU64,
    injected: AtomicU64,
}

impl Faults {
    /// `fraction` of the writes (0 to 1) fail with one of `codes` (each a full Neo4j code
    /// or its last part, e.g. `DeadlockDetected`; empty: both).
    pub fn new(fraction: f64, codes: &[String], seed: u64) -> Result<Faults, String> {
        let mut chosen = Vec::new();
        for code in codes.iter().map(|c| c.trim()).filter(|c| !c.is_empty()) {
            let known = [DEADLOCK, LOCK_CLIENT_STOPPED]
                .into_iter()
                .find(|k| *k == code || k.rsplit('.').next() == Some(code))
                .ok_or_else(|| {
                    format!(
                        "cannot inject `{code}`: use {DEADLOCK} or {LOCK_CLIENT_STOPPED} (or their last part)"
                    )
                })?;
            chosen.push(known);
        }
        if chosen.is_empty() {
            chosen = vec![DEADLOCK, LOCK_CLIENT_STOPPED];
        }
        Ok(Faults {
            threshold: AtomicU64::new(threshold(fraction)?),
            codes: chosen,
            seed,
            draws: AtomicU64::new(0),
            injected: AtomicU64::new(0),
        })
    }

    /// Draws for one write: the error to answer instead of running it, if any.
    pub fn draw(&self) -> Option<Neo4jError> {
        let n = self.draws.fetch_add(1, Ordering::Relaxed);
        let value = splitmix64(self.seed ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let threshold = self.threshold.load(Ordering::Relaxed);
        let fails = threshold == u64::MAX || value < threshold;
        if !fails {
            return None;
        }
        let count = self.injected.fetch_add(1, Ordering::Relaxed);
        let code = self.codes[(value % self.codes.len() as u64) as usize];
        let message = match code {
            DEADLOCK => format!(
                "ForsetiClient[transactionId={n}] can't acquire ExclusiveLock{{owner=ForsetiClient[transactionId={}]}}: a deadlock was detected and this transaction was chosen to roll back (injected by devgraph --inject-transient; fault {})",
                n + 1,
                count + 1
            ),
            _ => format!(
                "The transaction has been terminated. Retry your operation in a new transaction: the lock client was stopped (injected by devgraph --inject-transient; fault {})",
                count + 1
            ),
        };
        Some(Neo4jError::new(400, code, message))
    }

    /// From now on, fail `fraction` of the writes.
    pub fn set_fraction(&self, fraction: f64) -> Result<(), String> {
        self.threshold
            .store(threshold(fraction)?, Ordering::Relaxed);
        Ok(())
    }

    fn active(&self) -> bool {
        self.threshold.load(Ordering::Relaxed) > 0
    }

    /// `(injected, writes seen)`.
    pub fn counts(&self) -> (u64, u64) {
        (
            self.injected.load(Ordering::Relaxed),
            self.draws.load(Ordering::Relaxed),
        )
    }
}

fn threshold(fraction: f64) -> Result<u64, String> {
    if !(0.0..=1.0).contains(&fraction) {
        return Err(format!(
            "the injected fraction must be from 0 to 1, got {fraction}"
        ));
    }
    Ok(if fraction >= 1.0 {
        u64::MAX
    } else {
        (fraction * 2f64.powi(64)) as u64
    })
}

fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

static INSTALLED: OnceLock<Faults> = OnceLock::new();

/// Turns injection on for this process (once; main does it from its flags).
pub fn install(faults: Faults) {
    let _ = INSTALLED.set(faults);
}

/// The hook where statements run: `Some` answer instead of running `statement` — for
/// `CALL devgraph.faults(…)`, or an injected error for a write — else `None`.
pub fn intercept(
    session: &Session,
    statement: &str,
    write: bool,
) -> Option<Result<Json, Neo4jError>> {
    let faults = INSTALLED.get();
    if let Some(argument) = procedure_argument(statement) {
        return Some(counters(faults, argument));
    }
    let faults = faults.filter(|f| f.active())?;
    if !write || is_schema(statement) {
        return None;
    }
    // Only statements that change data take write locks on Neo4j.
    if !session
        .statement_writes(statement, "cypher")
        .unwrap_or(false)
    {
        return None;
    }
    faults.draw().map(Err)
}

/// The text between the parentheses of `CALL devgraph.faults(…)`, if that is the statement.
fn procedure_argument(statement: &str) -> Option<&str> {
    let rest = statement.trim().trim_end_matches(';').trim_end();
    let rest = rest.strip_prefix("CALL")?.trim_start();
    let rest = rest.strip_prefix(COUNTERS_PROCEDURE)?.trim_start();
    Some(rest.strip_prefix('(')?.strip_suffix(')')?.trim())
}

/// The counters, after changing the fraction when `argument` names one.
fn counters(faults: Option<&Faults>, argument: &str) -> Result<Json, Neo4jError> {
    if !argument.is_empty() {
        let faults = faults.ok_or_else(|| {
            Neo4jError::bad_request("start devgraph with --inject-transient to change it")
        })?;
        let fraction: f64 = argument.parse().map_err(|_| {
            Neo4jError::bad_request(format!(
                "devgraph.faults takes a fraction, not `{argument}`"
            ))
        })?;
        faults
            .set_fraction(fraction)
            .map_err(Neo4jError::bad_request)?;
    }
    let (injected, writes) = faults.map_or((0, 0), Faults::counts);
    Ok(json!({
        "data": {"fields": ["injected", "writes"], "values": [[injected, writes]]},
        "bookmarks": [],
    }))
}

/// Index and constraint DDL: no data locks, never failed.
fn is_schema(statement: &str) -> bool {
    let words: Vec<String> = statement
        .split_whitespace()
        .take(4)
        .map(str::to_ascii_uppercase)
        .collect();
    matches!(words.first().map(String::as_str), Some("CREATE" | "DROP"))
        && words[1..].iter().any(|w| w == "INDEX" || w == "CONSTRAINT")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn about_the_asked_fraction_fails_with_the_asked_codes() {
        let faults = Faults::new(0.2, &["DeadlockDetected".into()], 7).unwrap();
        let failed: Vec<Neo4jError> = (0..10_000).filter_map(|_| faults.draw()).collect();
        assert!(
            (1_700..2_300).contains(&failed.len()),
            "{} of 10000",
            failed.len()
        );
        assert!(failed.iter().all(|e| e.code == DEADLOCK && e.status == 400));
        assert_eq!(faults.counts(), (failed.len() as u64, 10_000));
    }

    #[test]
    fn both_codes_by_default_none_at_zero_all_at_one() {
        let both = Faults::new(0.5, &[], 1).unwrap();
        let codes: std::collections::BTreeSet<&str> = (0..1_000)
            .filter_map(|_| both.draw())
            .map(|e| e.code)
            .collect();
        assert_eq!(codes.len(), 2, "{codes:?}");
        let none = Faults::new(0.0, &[], 1).unwrap();
        assert!((0..1_000).all(|_| none.draw().is_none()));
        let all = Faults::new(1.0, &[LOCK_CLIENT_STOPPED.into()], 1).unwrap();
        assert!((0..1_000).all(|_| all.draw().is_some()));
    }

    #[test]
    fn a_seed_repeats_the_sequence_and_bad_settings_are_refused() {
        let a = Faults::new(0.3, &[], 42).unwrap();
        let b = Faults::new(0.3, &[], 42).unwrap();
        let seq = |f: &Faults| (0..200).map(|_| f.draw().is_some()).collect::<Vec<_>>();
        assert_eq!(seq(&a), seq(&b));
        assert!(Faults::new(1.5, &[], 0).is_err());
        assert!(Faults::new(0.1, &["Neo.TransientError.General.Whatever".into()], 0).is_err());
    }

    #[test]
    fn the_procedure_is_recognised_with_or_without_a_fraction() {
        assert_eq!(procedure_argument("CALL devgraph.faults()"), Some(""));
        assert_eq!(
            procedure_argument(" CALL devgraph.faults( 0.5 ) ;"),
            Some("0.5")
        );
        assert_eq!(procedure_argument("CALL db.labels()"), None);
        assert_eq!(procedure_argument("MATCH (n) RETURN n"), None);
        assert!(counters(None, "0.5").is_err());
        let faults = Faults::new(0.0, &[], 3).unwrap();
        assert!(faults.draw().is_none());
        counters(Some(&faults), "1").unwrap();
        assert!(faults.draw().is_some());
        assert!(counters(Some(&faults), "2").is_err());
        assert!(counters(Some(&faults), "lots").is_err());
    }

    #[test]
    fn schema_statements_are_recognised() {
        assert!(is_schema(
            "CREATE INDEX `kg_x` IF NOT EXISTS FOR (n:X) ON (n.id)"
        ));
        assert!(is_schema(
            "CREATE VECTOR INDEX chunks IF NOT EXISTS FOR (c:Chunk) ON c.e"
        ));
        assert!(is_schema(
            "create constraint c IF NOT EXISTS FOR (n:X) REQUIRE n.id IS UNIQUE"
        ));
        assert!(is_schema("DROP INDEX x"));
        assert!(!is_schema("CREATE (n:Index {id: 1})"));
        assert!(!is_schema("MATCH (n) SET n.x = 1"));
    }
}
