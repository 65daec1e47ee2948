//! Document writes that lose to a concurrent write of the same document.
//!
//! Two writers of one document id (ingest and delete, or two ingests) conflict in the
//! graph: Neo4j detects a deadlock (`Neo.TransientError.Transaction.DeadlockDetected`) and
//! Grafeo-based servers abort the later writer with the same code. The loser's whole
//! transaction was rolled back, so it is run again — a few times, after a short randomised
//! pause so the writers do not collide again at once. A write that still loses is the
//! client's race, not a failed dependency: 409 `conflict`, retryable, never a 503.

use kg_wit::types::{Error, ErrorCode};
use neo4j_client::{ErrorKind, Neo4jError};
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

/// Attempts after the first.
pub const RETRIES: u32 = 3;
/// The pause before retry `n` (1-based) is `BASE_PAUSE_MS << (n - 1)` plus up to as much
/// again at random: at most 40, 80 and 160 ms for three retries.
pub const BASE_PAUSE_MS: u64 = 20;

/// Neo4j status codes that mean the transaction lost to a concurrent one. Every
/// `Neo.TransientError.Transaction.*` (deadlock, lock wait timeout, outdated
/// transaction) and `Neo.ClientError.Statement.EntityNotFound`, which the retriever's
/// statements only meet when a concurrent transaction deleted a node they had matched.
pub fn is_conflict(e: &Neo4jError) -> bool {
    e.code.as_deref().is_some_and(|c| {
        c.starts_with("Neo.TransientError.Transaction.")
            || c == "Neo.ClientError.Statement.EntityNotFound"
    })
}

/// Worth running again: the graph answered and rolled the transaction back, and the
/// same transaction may succeed now (a conflict, or another `Neo.TransientError`). Not
/// an unreachable graph or a timeout: the outcome of those is unknown, and they are the
/// dependency's failure to report.
pub fn is_retryable(e: &Neo4jError) -> bool {
    e.kind == ErrorKind::Transient || is_conflict(e)
}

/// The pause before retry `retry` (1-based), `random` choosing the jitter.
pub fn pause_ms(retry: u32, random: u64) -> u64 {
    let base = BASE_PAUSE_MS << retry.saturating_sub(1).min(6);
    base + random % base
}

/// Runs `attempt` until it succeeds, fails with an error that is not retryable, or has
/// been retried [`RETRIES`] times; `pause(n)` is called before retry `n`. Each attempt
/// must be a whole transaction (begun, committed or rolled back within it).
pub fn with_retries<R>(
    mut attempt: impl FnMut() -> Result<R, Neo4jError>,
    mut pause: impl FnMut(u32, &Neo4jError),
) -> Result<R, Neo4jError> {
    let mut retry = 0;
    loop {
        match attempt() {
            Err(e) if retry < RETRIES && is_retryable(&e) => {
                retry += 1;
                pause(retry, &e);
            }
            other => return other,
        }
    }
}

/// Sleeps before retry `retry` of `what`, and says so on stderr (the host's log).
pub fn sleep(what: &str, retry: u32, e: &Neo4jError) {
    let ms = pause_ms(retry, random());
    eprintln!(
        "retriever: {what}: {} on attempt {retry}; retrying in {ms} ms",
        e.code.as_deref().unwrap_or("transient error")
    );
    std::thread::sleep(Duration::from_millis(ms));
}

/// The typed error for a write that failed after its retries: a lost race is a 409
/// `conflict` (naming only the status code, not the server's internals); anything else
/// keeps the graph error's class (`Error::from_graph`).
pub fn write_error(context: &str, e: &Neo4jError) -> Error {
    if is_conflict(e) {
        let mut error = Error::new(
            ErrorCode::Conflict,
            format!(
                "{context}: the document is being changed concurrently; retry ({} after {} attempts)",
                e.code.as_deref().unwrap_or_default(),
                RETRIES + 1
            ),
        );
        error.retryable = true;
        error
    } else {
        crate::errors::graph_error(context, e)
    }
}

/// A random number without a dependency: std seeds each `RandomState` from the
/// platform's random source (WASI `random` in the component).
fn random() -> u64 {
    std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(code: &str) -> Neo4jError {
        Neo4jError::from_code(code, "Write-write conflict on entity Node(NodeId(7))")
    }

    const DEADLOCK: &str = "Neo.TransientError.Transaction.DeadlockDetected";

    #[test]
    fn pauses_grow_with_jitter_and_stay_bounded() {
        assert_eq!(
            (pause_ms(1, 0), pause_ms(2, 0), pause_ms(3, 0)),
            (20, 40, 80)
        );
        assert_eq!(pause_ms(1, 19), 39);
        assert_eq!(pause_ms(3, u64::MAX), 80 + u64::MAX % 80);
        assert!((1..=RETRIES).map(|n| pause_ms(n, u64::MAX)).sum::<u64>() < 300);
        assert_ne!(random(), random(), "two draws differ");
    }

    #[test]
    fn conflicts_are_retried_then_given_up() {
        let mut attempts = 0;
        let mut pauses = vec![];
        let result: Result<(), _> = with_retries(
            || {
                attempts += 1;
                Err(error(DEADLOCK))
            },
            |n, _| pauses.push(n),
        );
        assert_eq!(attempts, 1 + RETRIES);
        assert_eq!(pauses, vec![1, 2, 3]);
        let e = write_error("storing the document failed", &result.unwrap_err());
        assert_eq!((e.code, e.code.http_status()), (ErrorCode::Conflict, 409));
        assert!(e.retryable);
        assert!(
            e.message.contains("being changed concurrently; retry")
                && e.message.contains(DEADLOCK)
                && !e.message.contains("NodeId"),
            "{}",
            e.message
        );
    }

    #[test]
    fn a_conflict_that_clears_succeeds() {
        let mut attempts = 0;
        let result = with_retries(
            || {
                attempts += 1;
                if attempts < 3 {
                    Err(error(DEADLOCK))
                } else {
                    Ok(attempts)
                }
            },
            |_, _| {},
        );
        assert_eq!(result, Ok(3));
    }

    #[test]
    fn what_is_retried_and_how_it_ends() {
        // Statuses other than 409 are `Error::from_graph`'s; only 503 is asserted here.
        for (code, retried, status) in [
            (DEADLOCK, true, Some(409)),
            (
                "Neo.TransientError.Transaction.LockClientStopped",
                true,
                Some(409),
            ),
            ("Neo.ClientError.Statement.EntityNotFound", true, Some(409)),
            // Transient, but the server's state, not a race: the dependency failed.
            (
                "Neo.TransientError.General.DatabaseUnavailable",
                true,
                Some(503),
            ),
            ("Neo.ClientError.Statement.TypeError", false, None),
            ("Neo.DatabaseError.Statement.ExecutionFailed", false, None),
            // The statement itself is too expensive: running it again fails again.
            (
                "Neo.TransientError.General.MemoryPoolOutOfMemoryError",
                false,
                None,
            ),
        ] {
            let mut attempts = 0;
            let e = with_retries::<()>(
                || {
                    attempts += 1;
                    Err(error(code))
                },
                |_, _| {},
            )
            .unwrap_err();
            assert_eq!(attempts > 1, retried, "{code}");
            let e = write_error("deleting the document failed", &e);
            if let Some(status) = status {
                assert_eq!(e.code.http_status(), status, "{code}: {}", e.message);
            } else {
                assert_ne!(e.code, ErrorCode::Conflict, "{code}");
            }
        }
        // No answer: the outcome is unknown, so the write is not run again here.
        let mut attempts = 0;
        let _ = with_retries::<()>(
            || {
                attempts += 1;
                Err(Neo4jError::new(
                    ErrorKind::Unavailable,
                    "connection refused",
                ))
            },
            |_, _| {},
        );
        assert_eq!(attempts, 1);
    }
}
