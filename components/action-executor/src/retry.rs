//! Retrying a synchronous graph call on transient errors, with the batch runner's backoff
//! (exponential with jitter, so two callers that collided do not collide again at once).

use neo4j_client::{ErrorKind, Neo4jError};

/// Attempts one graph call gets, the first included.
pub const ATTEMPTS: u32 = 5;

/// How one retried call ended: its value, or its last error (with the attempts made).
pub struct Exhausted {
    pub error: Neo4jError,
    pub attempts: u32,
}

/// Runs `call` (given the attempt number, from 0) until it succeeds, fails with an error
/// that a repeat cannot fix, or has had [`ATTEMPTS`] tries. Only safe for a `call` that may
/// run twice: a transient error (deadlock, lock client stopped…) rolled the statement back,
/// but a timeout or lost answer may hide a commit, so such a call must recognise its own
/// earlier effect (the undo does, by its id).
pub fn with_retries<T>(mut call: impl FnMut(u32) -> Result<T, Neo4jError>) -> Result<T, Exhausted> {
    let mut attempt = 0;
    loop {
        match call(attempt) {
            Ok(value) => return Ok(value),
            Err(error) if error.is_retryable() && attempt + 1 < ATTEMPTS => {
                attempt += 1;
                spin_sdk::http::run(crate::clock::sleep(backoff_ms(attempt)));
            }
            Err(error) => {
                return Err(Exhausted {
                    error,
                    attempts: attempt + 1,
                });
            }
        }
    }
}

/// The wait before retry `attempt` (from 1): 40, 80, 160… ms plus up to as much again.
fn backoff_ms(attempt: u32) -> u32 {
    let base = 20u32 << attempt.min(6);
    let jitter = (wasi::random::random::get_random_u64() % u64::from(base)) as u32;
    base + jitter
}

/// True when the graph answered that the statement lost a lock race (a deadlock it broke,
/// a lock client it stopped): the statement rolled back, and trying later may succeed.
pub fn lost_lock_race(e: &Neo4jError) -> bool {
    e.kind == ErrorKind::Transient
}
