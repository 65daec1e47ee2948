//! The batch state machine: de-duplicated ids cut into chunks, at most `max_concurrent`
//! chunks in flight (fewer while the graph shows contention: [`window`]), retries of a chunk on transient errors only, outcomes reported as
//! they arrive, and a final report in the caller's order. No I/O: the component drives it
//! and passes the time in.
//!
//! Honest outcomes under faults: a chunk whose statement was sent but never answered
//! (timeout, dropped connection) may have been applied. Such a chunk is never reported
//! as failed from the error alone: once its attempts are spent it goes to
//! *reconciliation*, where the component reads the action log (the record is written in
//! the same statement as the effect) and reports each entity as succeeded, failed (the
//! log was read when no attempt could still apply) or `unknown`.
//!
//! A batch also stops early: at its deadline, and when a circuit breaker sees
//! `breaker_after` consecutive chunks without an answer from the graph; what was not sent
//! then is reported `not-attempted`.

use kg_wit::types::{BatchSummary, EntityOutcome, Failure, FailureReason};
use std::collections::{BTreeMap, HashSet, VecDeque};

#[cfg(test)]
mod tests;
pub mod window;

pub use window::Concurrency;
use window::{Signal, Window};

/// Retries a chunk gets at least when the graph answers with a transient error (it rolled
/// back): measured on Neo4j 5.26, ten chunks of one supplier's orders in parallel, three
/// attempts left chunks failed with `DeadlockDetected`, and eight (about 5 s of the runner's
/// backoff: 40 ms doubling to 1.28 s, with jitter) still left one chunk of 50 in twenty
/// failed when 1,000 payments from one account ran four chunks at a time (the MCP batch
/// test, 2026-11-28). Twenty retries wait about 20 to 35 s, what Neo4j's own drivers
/// allow a transaction to keep retrying (30 s).
pub const TRANSIENT_RETRIES: u32 = 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchOptions {
    pub max_concurrent: u32,
    pub chunk_size: u32,
    pub chunk_timeout_ms: u32,
    pub max_retries: u32,
}

impl Default for BatchOptions {
    fn default() -> Self {
        BatchOptions {
            max_concurrent: 10,
            chunk_size: 50,
            chunk_timeout_ms: 30_000,
            max_retries: 2,
        }
    }
}

impl BatchOptions {
    /// Refuses options that cannot work, naming the field.
    pub fn validate(&self) -> Result<(), String> {
        let check = |name: &str, v: u32, lo: u32, hi: u32| {
            if (lo..=hi).contains(&v) {
                Ok(())
            } else {
                Err(format!("`{name}` must be from {lo} to {hi}, got {v}"))
            }
        };
        check("max_concurrent", self.max_concurrent, 1, 64)?;
        check("chunk_size", self.chunk_size, 1, 1000)?;
        check("chunk_timeout_ms", self.chunk_timeout_ms, 100, 600_000)?;
        check("max_retries", self.max_retries, 0, 10)
    }
}

/// When a batch gives up early (operator settings, not per request).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Guards {
    /// No chunk starts after this instant (the driver's monotonic clock, ms).
    pub deadline_ms: Option<u64>,
    /// Consecutive chunk attempts without an answer from the graph that open the breaker
    /// (0 = never).
    pub breaker_after: u32,
}

impl Default for Guards {
    fn default() -> Self {
        Guards {
            deadline_ms: None,
            breaker_after: 3,
        }
    }
}

/// One round trip's worth of entities: `(entity id, action-log id)` pairs.
#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    pub index: usize,
    pub items: Vec<(String, String)>,
    pub attempt: u32,
    /// The concurrency window's number for this attempt (see [`Window::send`]).
    pub sent: u64,
    /// How long the graph took to answer this attempt (ms, its backoff not counted), set
    /// by the driver: the window holds while round trips show chunks queueing.
    pub round_trip_ms: Option<u64>,
    /// Set once an attempt was sent and not answered: the chunk may have been applied.
    /// Holds that attempt's error and the instant after which it can no longer apply.
    pub uncertain: Option<Uncertain>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Uncertain {
    pub message: String,
    /// The driver's monotonic clock (ms): after it, no attempt sent so far can commit.
    pub settles_at_ms: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ChunkError {
    /// The graph could not be reached (refused, no route): nothing was sent.
    Refused(String),
    /// The graph answered with a retryable error (deadlock, a statement that started
    /// too late): it rolled back, nothing was applied.
    Transient(String),
    /// Sent, but no answer (timeout, dropped connection): it may have been applied. A
    /// retry is safe (a committed entity replays under its idempotency key).
    Uncertain(Uncertain),
    /// The graph answered with an error not worth retrying; nothing was applied.
    Fatal(String),
}

/// Entities whose outcome the action log must settle.
#[derive(Debug, Clone, PartialEq)]
pub struct Reconcile {
    pub items: Vec<(String, String)>,
    pub uncertain: Uncertain,
}

/// What reading the action log for a [`Reconcile`] found.
#[derive(Debug, Clone, PartialEq)]
pub enum Settled {
    /// Read after `settles_at_ms`: an entity not in `applied` was not applied.
    Final { applied: Vec<EntityOutcome> },
    /// Not read, or read too early: an entity not in `applied` is unknown. `why` says
    /// what the user can do.
    Open {
        applied: Vec<EntityOutcome>,
        why: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    Cancelled,
    Deadline,
    Breaker,
}

pub struct Batch {
    pub entity_type: String,
    pub action_name: String,
    options: BatchOptions,
    guards: Guards,
    order: BTreeMap<String, usize>,
    queue: VecDeque<Chunk>,
    in_flight: usize,
    window: Window,
    to_reconcile: VecDeque<Reconcile>,
    reconciling: usize,
    outcomes: Vec<EntityOutcome>,
    reported: usize,
    stopped: Option<Stop>,
    unanswered_in_a_row: u32,
}

impl Batch {
    /// `log_prefix` makes action-log ids unique per request (`{prefix}-{n}`).
    pub fn new(
        entity_type: &str,
        action_name: &str,
        ids: &[String],
        log_prefix: &str,
        options: BatchOptions,
    ) -> Batch {
        let mut seen = HashSet::new();
        let unique: Vec<&String> = ids.iter().filter(|id| seen.insert(id.as_str())).collect();
        let order = unique
            .iter()
            .enumerate()
            .map(|(i, id)| ((*id).clone(), i))
            .collect();
        // Chunks in sorted id order: concurrent batches then lock entities in one global
        // order, which keeps deadlocks (and their retries) rare.
        let mut sorted: Vec<(usize, &String)> = unique.into_iter().enumerate().collect();
        sorted.sort_by(|a, b| a.1.cmp(b.1));
        let size = options.chunk_size.max(1) as usize;
        let queue = sorted
            .chunks(size)
            .enumerate()
            .map(|(index, chunk)| Chunk {
                index,
                items: chunk
                    .iter()
                    .map(|(i, id)| ((*id).clone(), format!("{log_prefix}-{i}")))
                    .collect(),
                attempt: 0,
                sent: 0,
                round_trip_ms: None,
                uncertain: None,
            })
            .collect();
        Batch {
            entity_type: entity_type.into(),
            action_name: action_name.into(),
            options,
            guards: Guards::default(),
            order,
            queue,
            in_flight: 0,
            window: Window::new(options.max_concurrent, Concurrency::default()),
            to_reconcile: VecDeque::new(),
            reconciling: 0,
            outcomes: Vec::new(),
            reported: 0,
            stopped: None,
            unanswered_in_a_row: 0,
        }
    }

    pub fn with_guards(mut self, guards: Guards) -> Batch {
        self.guards = guards;
        self
    }

    /// Whether the number in flight adapts under `max_concurrent` (the default) or stays
    /// at it.
    pub fn with_concurrency(mut self, concurrency: Concurrency) -> Batch {
        self.window = Window::new(self.options.max_concurrent, concurrency);
        self
    }

    pub fn total(&self) -> usize {
        self.order.len()
    }

    pub fn options(&self) -> BatchOptions {
        self.options
    }

    /// True once the breaker has opened: the graph stopped answering.
    pub fn graph_unreachable(&self) -> bool {
        self.stopped == Some(Stop::Breaker)
    }

    /// The next chunk to send, if the batch is still going, concurrency allows and any is
    /// waiting. `now_ms` is the driver's monotonic clock.
    pub fn start_next(&mut self, now_ms: u64) -> Option<Chunk> {
        if self
            .guards
            .deadline_ms
            .is_some_and(|deadline| now_ms >= deadline)
        {
            self.stop(Stop::Deadline);
        }
        if self.stopped.is_some() || self.in_flight >= self.window.limit() as usize {
            return None;
        }
        let mut chunk = self.queue.pop_front()?;
        chunk.sent = self.window.send();
        chunk.round_trip_ms = None;
        self.in_flight += 1;
        Some(chunk)
    }

    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// How many chunks may be in flight now (at most `max_concurrent`).
    pub fn window(&self) -> u32 {
        self.window.limit()
    }

    /// Records a chunk's result. Rows missing from a successful result become errors.
    pub fn complete(&mut self, mut chunk: Chunk, result: Result<Vec<EntityOutcome>, ChunkError>) {
        self.in_flight = self.in_flight.saturating_sub(1);
        // A rollback or a missing answer means too much in flight; a refused connection or
        // a fatal error says nothing about the load.
        let signal = match &result {
            Ok(_) => Signal::Clean,
            Err(ChunkError::Transient(_) | ChunkError::Uncertain(_)) => Signal::Contention,
            Err(ChunkError::Refused(_) | ChunkError::Fatal(_)) => Signal::Neutral,
        };
        self.window
            .observe_timed(chunk.sent, signal, chunk.round_trip_ms);
        let error = match result {
            Ok(outcomes) => {
                self.unanswered_in_a_row = 0;
                self.record_rows(&chunk, outcomes);
                return;
            }
            Err(e) => e,
        };
        let transient = matches!(error, ChunkError::Transient(_));
        let retryable = match &error {
            ChunkError::Refused(_) | ChunkError::Uncertain(_) => {
                self.unanswered_in_a_row += 1;
                true
            }
            ChunkError::Transient(_) => {
                self.unanswered_in_a_row = 0;
                true
            }
            ChunkError::Fatal(_) => {
                self.unanswered_in_a_row = 0;
                false
            }
        };
        let message = match error {
            ChunkError::Uncertain(u) => {
                let message = u.message.clone();
                // The latest unanswered attempt decides when the chunk settles.
                chunk.uncertain = Some(u);
                message
            }
            ChunkError::Refused(m) | ChunkError::Transient(m) | ChunkError::Fatal(m) => m,
        };
        if self.guards.breaker_after > 0 && self.unanswered_in_a_row >= self.guards.breaker_after {
            self.stop(Stop::Breaker);
        }
        // A transient error is the graph saying the chunk rolled back and may be sent
        // again (on Neo4j, mostly `DeadlockDetected`: concurrent chunks creating
        // relationships to the same supplier or account take its relationship-group locks
        // in no order the application controls). Neo4j's own drivers retry those for 30 s;
        // here they get at least TRANSIENT_RETRIES, whatever `max_retries` allows the
        // errors after which the graph's state is unknown.
        let budget = if transient {
            self.options.max_retries.max(TRANSIENT_RETRIES)
        } else {
            self.options.max_retries
        };
        if retryable && chunk.attempt < budget {
            if self.stopped.is_none() {
                // Retried first, before chunks that have not started.
                self.queue.push_front(Chunk {
                    attempt: chunk.attempt + 1,
                    ..chunk
                });
                return;
            }
            if chunk.uncertain.is_none() && self.stopped == Some(Stop::Cancelled) {
                // The batch was cancelled while this attempt was out, and it rolled back:
                // the retry it would have had is what the cancel prevents, as for a retry
                // already queued (a cancelled batch's unapplied entities are `cancelled`,
                // whether or not an attempt had rolled back).
                let (reason, why) = self.stop_outcome();
                let why = format!("{why} (an attempt rolled back: {message})");
                self.settle_unapplied(chunk, reason, &why);
                return;
            }
        }
        let why = format!(
            "not applied: {message} (after {} attempt(s))",
            chunk.attempt + 1
        );
        self.settle_unapplied(chunk, FailureReason::Error, &why);
    }

    /// A chunk that will not be sent again: reconciled from the action log if an attempt
    /// went unanswered (it may have applied), else each entity fails with `reason`.
    fn settle_unapplied(&mut self, chunk: Chunk, reason: FailureReason, message: &str) {
        match chunk.uncertain {
            Some(uncertain) => self.to_reconcile.push_back(Reconcile {
                items: chunk.items,
                uncertain,
            }),
            None => {
                for (id, _) in &chunk.items {
                    self.fail(id, reason, message);
                }
            }
        }
    }

    fn record_rows(&mut self, chunk: &Chunk, outcomes: Vec<EntityOutcome>) {
        let mut missing: HashSet<&String> = chunk.items.iter().map(|(id, _)| id).collect();
        for outcome in outcomes {
            if missing.remove(&outcome.entity_id) {
                self.outcomes.push(outcome);
            }
        }
        let mut missing: Vec<String> = missing.into_iter().cloned().collect();
        missing.sort();
        for id in missing {
            self.fail(
                &id,
                FailureReason::Error,
                "the graph returned no result for it",
            );
        }
    }

    /// The next group of entities whose outcome the action log must settle.
    pub fn start_reconcile(&mut self) -> Option<Reconcile> {
        let job = self.to_reconcile.pop_front()?;
        self.reconciling += 1;
        Some(job)
    }

    /// Records what the action log said about a [`Reconcile`]: applied entities succeed;
    /// the others failed if the log was read late enough, else their outcome is unknown.
    pub fn complete_reconcile(&mut self, job: Reconcile, settled: Settled) {
        self.reconciling = self.reconciling.saturating_sub(1);
        let (applied, why) = match settled {
            Settled::Final { applied } => (applied, None),
            Settled::Open { applied, why } => (applied, Some(why)),
        };
        let mut pending: HashSet<&String> = job.items.iter().map(|(id, _)| id).collect();
        for outcome in applied {
            if outcome.success && pending.remove(&outcome.entity_id) {
                self.outcomes.push(outcome);
            }
        }
        let mut pending: Vec<String> = pending.into_iter().cloned().collect();
        pending.sort();
        let message = &job.uncertain.message;
        for id in pending {
            match &why {
                None => self.fail(
                    &id,
                    FailureReason::Timeout,
                    &format!(
                        "not applied: {message}; the action log, read once no attempt could still apply, has no record of it"
                    ),
                ),
                Some(why) => self.fail(
                    &id,
                    FailureReason::Unknown,
                    &format!(
                        "outcome unknown: {message}, and the action log could not settle it ({why}); it may or may not have been applied, never twice"
                    ),
                ),
            }
        }
    }

    fn fail(&mut self, id: &str, reason: FailureReason, message: &str) {
        self.outcomes.push(EntityOutcome {
            entity_id: id.to_string(),
            success: false,
            changes: Vec::new(),
            failure: Some(Failure {
                reason,
                message: message.to_string(),
                precondition: None,
            }),
            log_id: None,
            replayed: false,
            undone: None,
        });
    }

    /// Stops starting chunks; those not started finish as cancelled.
    pub fn cancel(&mut self) {
        self.stop(Stop::Cancelled);
    }

    /// Stops starting chunks. A waiting chunk that was never sent is reported with the
    /// reason; one that was sent before (a retry of an unanswered attempt) goes to
    /// reconciliation instead, because it may have been applied.
    fn stop(&mut self, why: Stop) {
        if self.stopped.is_none() {
            self.stopped = Some(why);
        }
        let (reason, message) = self.stop_outcome();
        while let Some(chunk) = self.queue.pop_front() {
            self.settle_unapplied(chunk, reason, &message);
        }
    }

    /// The reason and message of an entity the batch's stop left unapplied.
    fn stop_outcome(&self) -> (FailureReason, String) {
        match self.stopped.unwrap_or(Stop::Cancelled) {
            Stop::Cancelled => (
                FailureReason::Cancelled,
                "the batch was cancelled before it ran".to_string(),
            ),
            Stop::Deadline => (
                FailureReason::NotAttempted,
                "not sent: the batch deadline passed first".to_string(),
            ),
            Stop::Breaker => (
                FailureReason::NotAttempted,
                format!(
                    "not sent: the graph did not answer {} attempts in a row, so the batch stopped",
                    self.unanswered_in_a_row
                ),
            ),
        }
    }

    /// Outcomes recorded since the previous call, in completion order.
    pub fn take_progress(&mut self) -> Vec<EntityOutcome> {
        let new = self.outcomes[self.reported..].to_vec();
        self.reported = self.outcomes.len();
        new
    }

    /// True when outcomes are waiting for [`Batch::take_progress`].
    pub fn has_progress(&self) -> bool {
        self.outcomes.len() > self.reported
    }

    pub fn completed(&self) -> usize {
        self.outcomes.len()
    }

    pub fn is_finished(&self) -> bool {
        self.in_flight == 0
            && self.queue.is_empty()
            && self.reconciling == 0
            && self.to_reconcile.is_empty()
    }

    /// The final report; successes and failures each in the caller's order.
    pub fn summary(&self, duration_ms: u64) -> BatchSummary {
        let mut all = self.outcomes.clone();
        all.sort_by_key(|o| self.order.get(&o.entity_id).copied().unwrap_or(usize::MAX));
        let (successes, failures): (Vec<_>, Vec<_>) = all.into_iter().partition(|o| o.success);
        let unknown = failures.iter().filter(|o| is_unknown(o)).count();
        BatchSummary {
            entity_type: self.entity_type.clone(),
            action_name: self.action_name.clone(),
            total: self.order.len() as u32,
            succeeded: successes.len() as u32,
            failed: (failures.len() - unknown) as u32,
            unknown: unknown as u32,
            successes,
            failures,
            duration_ms,
        }
    }
}

pub fn is_unknown(outcome: &EntityOutcome) -> bool {
    outcome
        .failure
        .as_ref()
        .is_some_and(|f| f.reason == FailureReason::Unknown)
}
