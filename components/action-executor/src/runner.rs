//! Executing chunks concurrently: each chunk is one auto-commit WRITE statement sent with
//! spin-sdk's async outbound HTTP, raced against its deadline; a [`Run`] keeps the chunks
//! in flight between the caller's `next` pulls.

use crate::clock::{monotonic_ms, sleep};
use futures::FutureExt;
use futures::future::{Either, LocalBoxFuture, select};
use futures::stream::{FuturesUnordered, StreamExt};
use kg_actions::batch::{Batch, Chunk, ChunkError};
use kg_actions::log::{changes_by_log, entries_statement, records};
use kg_actions::outcome::{RowOutcome, executions};
use kg_actions::statement::{ActionPlan, RunContext, Statement};
use kg_spin::{SpinTransport, send_async};
use kg_wit::types::{BatchSummary, EntityOutcome};
use neo4j_client::{AccessMode, Client, ErrorKind, Neo4jError, QueryResult, parse_run_response};
use std::cell::RefCell;
use std::rc::Rc;

pub struct Shared {
    pub plan: ActionPlan,
    pub client: Client<SpinTransport>,
    pub run: RunContext,
    pub chunk_timeout_ms: u32,
}

type ChunkDone = (Chunk, Result<Vec<EntityOutcome>, ChunkError>);

pub struct Run {
    shared: Rc<Shared>,
    state: RefCell<State>,
}

struct State {
    batch: Batch,
    flying: FuturesUnordered<LocalBoxFuture<'static, ChunkDone>>,
    started_ms: u64,
}

pub enum Poll {
    Progress(Vec<EntityOutcome>),
    Pending,
    Finished(BatchSummary),
}

impl Run {
    pub fn new(shared: Shared, batch: Batch) -> Run {
        Run {
            shared: Rc::new(shared),
            state: RefCell::new(State {
                batch,
                flying: FuturesUnordered::new(),
                started_ms: monotonic_ms(),
            }),
        }
    }

    pub fn total(&self) -> u32 {
        self.state.borrow().batch.total() as u32
    }

    pub fn cancel(&self) {
        self.state.borrow_mut().batch.cancel();
    }

    /// Starts what concurrency allows and waits up to `wait_ms` for a chunk to finish.
    pub fn next(&self, wait_ms: u32) -> Poll {
        let mut guard = self.state.borrow_mut();
        let state = &mut *guard;
        if let Some(poll) = ready(state) {
            return poll;
        }
        let shared = self.shared.clone();
        spin_sdk::http::run(async {
            let mut deadline = sleep(wait_ms);
            loop {
                while let Some(chunk) = state.batch.start_next() {
                    state
                        .flying
                        .push(run_chunk(shared.clone(), chunk).boxed_local());
                }
                if state.flying.is_empty() {
                    return;
                }
                let Either::Left((Some((chunk, result)), _)) =
                    select(state.flying.next(), &mut deadline).await
                else {
                    return;
                };
                state.batch.complete(chunk, result);
                // Collect whatever else finished meanwhile without waiting.
                while let Some(Some((chunk, result))) = state.flying.next().now_or_never() {
                    state.batch.complete(chunk, result);
                }
                // A retried chunk reports nothing yet: keep waiting until the deadline.
                if state.batch.has_progress() || state.batch.is_finished() {
                    return;
                }
            }
        });
        ready(state).unwrap_or(Poll::Pending)
    }

    /// Pulls until the batch finishes.
    pub fn finish(&self) -> BatchSummary {
        loop {
            if let Poll::Finished(summary) = self.next(1_000) {
                return summary;
            }
        }
    }
}

fn ready(state: &mut State) -> Option<Poll> {
    let progress = state.batch.take_progress();
    if !progress.is_empty() {
        return Some(Poll::Progress(progress));
    }
    state.batch.is_finished().then(|| {
        Poll::Finished(
            state
                .batch
                .summary(monotonic_ms().saturating_sub(state.started_ms)),
        )
    })
}

async fn run_chunk(shared: Rc<Shared>, chunk: Chunk) -> ChunkDone {
    if chunk.attempt > 0 {
        // Exponential backoff with jitter, so retried chunks do not collide again at once.
        let base = 20u32 << chunk.attempt.min(6);
        let jitter = (wasi::random::random::get_random_u64() % u64::from(base)) as u32;
        sleep(base + jitter).await;
    }
    let timeout = shared.chunk_timeout_ms;
    let work = execute_chunk(shared, chunk.clone()).boxed_local();
    let result = match select(work, sleep(timeout)).await {
        Either::Left((result, _)) => result,
        Either::Right(_) => Err(ChunkError::Timeout(format!(
            "the chunk did not finish within {timeout} ms"
        ))),
    };
    (chunk, result)
}

async fn send(
    shared: &Shared,
    statement: Statement,
    mode: AccessMode,
) -> Result<QueryResult, Neo4jError> {
    let request = shared
        .client
        .run_request(&statement.text, statement.params, mode);
    let response = send_async(request).await?;
    parse_run_response(&response)
}

async fn execute_chunk(shared: Rc<Shared>, chunk: Chunk) -> Result<Vec<EntityOutcome>, ChunkError> {
    let statement = shared.plan.execute_statement(&chunk.items, &shared.run);
    let result = send(&shared, statement, AccessMode::Write)
        .await
        .map_err(chunk_error)?;
    let rows = executions(&shared.plan, &result);
    let replayed: Vec<String> = rows
        .iter()
        .filter_map(|r| match r {
            RowOutcome::Replayed(r) => Some(r.log_id.clone()),
            RowOutcome::Done(_) => None,
        })
        .collect();
    let recorded = if replayed.is_empty() {
        Default::default()
    } else {
        let entries = send(&shared, entries_statement(&replayed), AccessMode::Read)
            .await
            .map_err(chunk_error)?;
        changes_by_log(&records(&entries))
    };
    Ok(rows
        .into_iter()
        .map(|row| match row {
            RowOutcome::Done(outcome) => outcome,
            RowOutcome::Replayed(r) => EntityOutcome {
                changes: recorded.get(&r.log_id).cloned().unwrap_or_default(),
                entity_id: r.entity_id,
                success: true,
                failure: None,
                log_id: Some(r.log_id),
                replayed: true,
            },
        })
        .collect())
}

/// Transient trouble (deadlocks, 5xx, connection drops) is retried; a timeout too (safe:
/// a chunk that did commit replays under its idempotency key); anything else is final.
fn chunk_error(e: Neo4jError) -> ChunkError {
    if e.kind == ErrorKind::Timeout {
        ChunkError::Timeout(format!("graph timeout: {e}"))
    } else if e.is_retryable() {
        ChunkError::Transient(format!("transient graph error: {e}"))
    } else {
        ChunkError::Fatal(format!("graph error: {e}"))
    }
}
