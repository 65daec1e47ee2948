//! Executing chunks concurrently: each chunk is one auto-commit WRITE statement sent with
//! spin-sdk's async outbound HTTP, raced against its deadline; a [`Run`] keeps the chunks
//! (and the action-log reads that settle unanswered ones) in flight between the caller's
//! `next` pulls.
//!
//! Why an unanswered chunk can be settled: each attempt carries `$not_after` (the graph
//! applies nothing in a statement that starts later) and a server-side execution limit,
//! both half the chunk timeout. So an attempt sent at `t` has committed or will never
//! commit by `t + chunk timeout + clock skew`; an action-log read after that is final.

use crate::clock::{epoch_ms, monotonic_ms, sleep};
use futures::FutureExt;
use futures::future::{Either, LocalBoxFuture, select};
use futures::stream::{FuturesUnordered, StreamExt};
use kg_actions::batch::{Batch, Chunk, ChunkError, Reconcile, Settled, Uncertain};
use kg_actions::log::{LogRecord, entries_statement, executions_statement, records};
use kg_actions::outcome::{RowOutcome, executions};
use kg_actions::statement::{ActionPlan, RunContext, Statement, execution_key};
use kg_spin::{SpinTransport, send_async};
use kg_wit::types::{BatchSummary, EntityOutcome, Failure, FailureReason};
use neo4j_client::{AccessMode, Client, ErrorKind, Neo4jError, QueryResult, TransportErrorKind};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

pub struct Shared {
    pub plan: ActionPlan,
    pub client: Client<SpinTransport>,
    pub run: RunContext,
    pub chunk_timeout_ms: u32,
    /// How far this host's clock and the graph server's may differ (ms).
    pub clock_skew_ms: u32,
}

enum Done {
    Chunk(Chunk, Result<Vec<EntityOutcome>, ChunkError>),
    Reconciled(Reconcile, Settled),
}

pub struct Run {
    shared: Rc<Shared>,
    state: RefCell<State>,
}

struct State {
    batch: Batch,
    flying: FuturesUnordered<LocalBoxFuture<'static, Done>>,
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
                while let Some(chunk) = state.batch.start_next(monotonic_ms()) {
                    state
                        .flying
                        .push(run_chunk(shared.clone(), chunk).boxed_local());
                }
                while let Some(job) = state.batch.start_reconcile() {
                    state
                        .flying
                        .push(reconcile(shared.clone(), job).boxed_local());
                }
                if state.flying.is_empty() {
                    return;
                }
                let Either::Left((Some(done), _)) =
                    select(state.flying.next(), &mut deadline).await
                else {
                    return;
                };
                record(&mut state.batch, done);
                // Collect whatever else finished meanwhile without waiting.
                while let Some(Some(done)) = state.flying.next().now_or_never() {
                    record(&mut state.batch, done);
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

fn record(batch: &mut Batch, done: Done) {
    match done {
        Done::Chunk(chunk, result) => batch.complete(chunk, result),
        Done::Reconciled(job, settled) => batch.complete_reconcile(job, settled),
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

async fn run_chunk(shared: Rc<Shared>, chunk: Chunk) -> Done {
    if chunk.attempt > 0 {
        // Exponential backoff with jitter, so retried chunks do not collide again at once.
        let base = 20u32 << chunk.attempt.min(6);
        let jitter = (wasi::random::random::get_random_u64() % u64::from(base)) as u32;
        sleep(base + jitter).await;
    }
    let timeout = shared.chunk_timeout_ms;
    let settles_at_ms = settles_at_ms(&shared, timeout / 2);
    let no_answer = |message: String| {
        ChunkError::Uncertain(Uncertain {
            message,
            settles_at_ms,
        })
    };
    let sent_at = monotonic_ms();
    let work = execute_chunk(shared, chunk.clone()).boxed_local();
    let result = match select(work, sleep(timeout)).await {
        Either::Left((Ok(outcomes), _)) => Ok(outcomes),
        Either::Left((Err(failure), _)) => Err(failure.into_chunk_error(no_answer)),
        Either::Right(_) => Err(no_answer(format!(
            "the graph did not answer within {timeout} ms"
        ))),
    };
    let round_trip_ms = Some(monotonic_ms().saturating_sub(sent_at));
    Done::Chunk(
        Chunk {
            round_trip_ms,
            ..chunk
        },
        result,
    )
}

/// Why a statement got no result.
enum SendFailure {
    /// No connection could be made: nothing reached the graph.
    NotSent(String),
    /// Sent, and no answer came (dropped connection, gateway timeout).
    NoAnswer(String),
    /// The graph answered with an error: the statement rolled back.
    Answered(Neo4jError),
}

impl SendFailure {
    fn into_chunk_error(self, no_answer: impl FnOnce(String) -> ChunkError) -> ChunkError {
        match self {
            SendFailure::NotSent(m) => ChunkError::Refused(format!("graph unreachable: {m}")),
            SendFailure::NoAnswer(m) => no_answer(format!("no answer from the graph: {m}")),
            // The server's execution limit (see the module docs) is worth a retry too.
            // So is a broken unique key of the action log: another writer committed one of
            // the chunk's execution keys first (the whole chunk rolled back), and the retry
            // finds that writer's log entry and reports the entity applied once.
            SendFailure::Answered(e)
                if e.is_retryable()
                    || e.is_constraint_violation()
                    || e.code
                        .as_deref()
                        .is_some_and(|c| c.contains("TransactionTimedOut")) =>
            {
                ChunkError::Transient(format!("transient graph error: {e}"))
            }
            SendFailure::Answered(e) => ChunkError::Fatal(format!("graph error: {e}")),
        }
    }
}

async fn send(
    shared: &Shared,
    statement: Statement,
    mode: AccessMode,
) -> Result<QueryResult, SendFailure> {
    // Chunks are in flight together: each statement's span is a sibling, not a parent
    // of the next one's.
    let mut span = shared.client.concurrent_statement_span(&statement.text);
    let mut resent = false;
    loop {
        let (mut request, sent_bookmarks) =
            shared
                .client
                .prepare_run(&statement.text, statement.params.clone(), mode);
        if let Some(parent) = span.traceparent() {
            request.headers.retain(|(name, _)| name != "traceparent");
            request.headers.push(("traceparent".to_string(), parent));
        }
        let response = send_async(request).await.map_err(|e| {
            span.fail(&format!("{:?}", e.kind), &e.message);
            match e.kind {
                TransportErrorKind::Connect => SendFailure::NotSent(e.message),
                TransportErrorKind::Denied => SendFailure::Answered(e.into()),
                TransportErrorKind::Timeout | TransportErrorKind::Other => {
                    SendFailure::NoAnswer(e.message)
                }
            }
        })?;
        let result = shared.client.finish_run(&sent_bookmarks, &response);
        neo4j_client::record_statement(&mut span, &result);
        match result {
            Ok(result) => return Ok(result),
            // A server without `maxExecutionTime` refused the statement unrun: once more
            // without it (chunks then settle only from what the log shows applied).
            Err(e) if !resent && shared.client.drop_refused_max_execution_time(&e) => resent = true,
            // A gateway's 502/503/504: the statement may or may not have reached the graph.
            Err(e) if matches!(e.kind, ErrorKind::Unavailable | ErrorKind::Timeout) => {
                return Err(SendFailure::NoAnswer(e.to_string()));
            }
            Err(e) => return Err(SendFailure::Answered(e)),
        }
    }
}

/// When an attempt sent now has committed or never will, on this host's monotonic clock:
/// it cannot start after `$not_after` (`half` ms from now on the graph's clock) nor run
/// longer than the server's limit; `None` when the server takes no limit.
fn settles_at_ms(shared: &Shared, half: u32) -> u64 {
    match shared.client.max_execution_time() {
        Some(seconds) => {
            monotonic_ms() + u64::from(half) + seconds * 1_000 + u64::from(shared.clock_skew_ms)
        }
        None => u64::MAX,
    }
}

async fn execute_chunk(
    shared: Rc<Shared>,
    chunk: Chunk,
) -> Result<Vec<EntityOutcome>, SendFailure> {
    let half = shared.chunk_timeout_ms / 2;
    let not_after = epoch_ms() + i64::from(half);
    let statement = shared
        .plan
        .execute_statement(&chunk.items, &shared.run, not_after);
    let result = send(&shared, statement, AccessMode::Write).await?;
    let rows = executions(&shared.plan, &result);
    let replayed: Vec<String> = rows
        .iter()
        .filter_map(|r| match r {
            RowOutcome::Replayed(r) => Some(r.log_id.clone()),
            _ => None,
        })
        .collect();
    // The write answered, so every row's outcome is known; the records only add what a
    // replayed entity changed (and whether it was undone since). Without them a replay
    // is still reported as the success it is.
    let recorded: BTreeMap<String, LogRecord> = if replayed.is_empty() {
        BTreeMap::new()
    } else {
        let read = send(&shared, entries_statement(&replayed), AccessMode::Read);
        match read.await {
            Ok(entries) => records(&entries)
                .into_iter()
                .map(|r| (r.id.clone(), r))
                .collect(),
            Err(_) => BTreeMap::new(),
        }
    };
    Ok(rows
        .into_iter()
        .map(|row| match row {
            RowOutcome::Done(outcome) => outcome,
            RowOutcome::Replayed(r) => match recorded.get(&r.log_id) {
                Some(record) => record.applied_outcome(true),
                None => EntityOutcome {
                    entity_id: r.entity_id,
                    success: true,
                    changes: Vec::new(),
                    failure: None,
                    log_id: Some(r.log_id),
                    replayed: true,
                    undone: None,
                },
            },
            RowOutcome::Expired(id) => kg_actions::outcome::failed(
                &id,
                Failure {
                    reason: FailureReason::Timeout,
                    message: format!(
                        "not applied: the graph started the statement more than {half} ms after it was sent"
                    ),
                    precondition: None,
                },
            ),
        })
        .collect())
}

/// Reads the action log for entities whose chunk was sent and never answered. A read
/// after the chunk settled is final; before, only what it finds applied is. The graph
/// gets four tries, each bounded; none more once a connection is refused (it is gone).
async fn reconcile(shared: Rc<Shared>, job: Reconcile) -> Done {
    let keys: Vec<String> = job
        .items
        .iter()
        .map(|(id, _)| execution_key(&shared.plan.action, &shared.run.idempotency_key, id))
        .collect();
    let read_timeout = shared.chunk_timeout_ms.min(5_000);
    let tries = 4;
    let mut applied = Vec::new();
    let mut why = String::from("the action log was not read");
    for attempt in 0..tries {
        if attempt > 0 {
            // Wait for the chunk to settle, at least a moment between tries.
            let until_settled = job.uncertain.settles_at_ms.saturating_sub(monotonic_ms());
            sleep(until_settled.clamp(200, u64::from(read_timeout)) as u32).await;
        }
        let read_at = monotonic_ms();
        // Sent as a WRITE (it writes nothing): a write transaction still committing when
        // the log is read must be seen, not raced. A process frozen between an attempt's
        // last time check and its commit (devgraph's SIGSTOP, a VM pause) commits after it
        // resumes; a READ running beside that commit found no record and settled the
        // entity as not applied (the action_faults flake, 2 in 15 runs under load).
        // devgraph runs writes one at a time, so this read waits for that commit. On
        // Neo4j a write-mode read takes no lock, so a pause that lands between a
        // transaction's timeout check and its commit is still a (narrow) window there; a
        // cluster answers the read from the leader, where the attempt committed.
        let read = send(&shared, executions_statement(&keys), AccessMode::Write).boxed_local();
        match select(read, sleep(read_timeout)).await {
            Either::Left((Ok(result), _)) => {
                applied = records(&result)
                    .iter()
                    .map(|r| r.applied_outcome(false))
                    .collect();
                if read_at >= job.uncertain.settles_at_ms || applied.len() == keys.len() {
                    return Done::Reconciled(job, Settled::Final { applied });
                }
                why = "the statement could still apply when the log was last read".into();
            }
            Either::Left((Err(SendFailure::NotSent(m)), _)) => {
                why = format!("the graph is unreachable: {m}");
                break;
            }
            Either::Left((Err(SendFailure::NoAnswer(m)), _)) => why = m,
            Either::Left((Err(SendFailure::Answered(e)), _)) => why = e.to_string(),
            Either::Right(_) => why = format!("the graph did not answer within {read_timeout} ms"),
        }
    }
    let why = format!(
        "{why}. Repeat the request with idempotency key `{}` to settle it (it cannot apply twice), or look it up in GET /actions/log",
        shared.run.idempotency_key
    );
    Done::Reconciled(job, Settled::Open { applied, why })
}
