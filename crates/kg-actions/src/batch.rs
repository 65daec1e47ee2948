//! The batch state machine: de-duplicated ids cut into chunks, at most `max_concurrent`
//! chunks in flight, retries of a chunk on transient errors only, outcomes reported as
//! they arrive, and a final report in the caller's order. No I/O: the component drives it.

use kg_wit::types::{BatchSummary, EntityOutcome, Failure, FailureReason};
use std::collections::{BTreeMap, HashSet, VecDeque};

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

/// One round trip's worth of entities: `(entity id, action-log id)` pairs.
#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    pub index: usize,
    pub items: Vec<(String, String)>,
    pub attempt: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ChunkError {
    /// Worth retrying: deadlock, 5xx, connection trouble.
    Transient(String),
    /// The chunk ran past its deadline (it may still commit; a retry is safe because the
    /// idempotency key makes a committed entity replay instead of running again).
    Timeout(String),
    /// Not worth retrying.
    Fatal(String),
}

pub struct Batch {
    pub entity_type: String,
    pub action_name: String,
    options: BatchOptions,
    order: BTreeMap<String, usize>,
    queue: VecDeque<Chunk>,
    in_flight: usize,
    outcomes: Vec<EntityOutcome>,
    reported: usize,
    cancelled: bool,
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
            })
            .collect();
        Batch {
            entity_type: entity_type.into(),
            action_name: action_name.into(),
            options,
            order,
            queue,
            in_flight: 0,
            outcomes: Vec::new(),
            reported: 0,
            cancelled: false,
        }
    }

    pub fn total(&self) -> usize {
        self.order.len()
    }

    pub fn options(&self) -> BatchOptions {
        self.options
    }

    /// The next chunk to send, if concurrency allows and any is waiting.
    pub fn start_next(&mut self) -> Option<Chunk> {
        if self.cancelled || self.in_flight >= self.options.max_concurrent as usize {
            return None;
        }
        let chunk = self.queue.pop_front()?;
        self.in_flight += 1;
        Some(chunk)
    }

    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Records a chunk's result. Rows missing from a successful result become errors.
    pub fn complete(&mut self, chunk: Chunk, result: Result<Vec<EntityOutcome>, ChunkError>) {
        self.in_flight = self.in_flight.saturating_sub(1);
        match result {
            Ok(outcomes) => {
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
            Err(ChunkError::Transient(_) | ChunkError::Timeout(_))
                if chunk.attempt < self.options.max_retries && !self.cancelled =>
            {
                // Retried first, before chunks that have not started.
                self.queue.push_front(Chunk {
                    attempt: chunk.attempt + 1,
                    ..chunk
                });
            }
            Err(e) => {
                let (reason, message) = match e {
                    ChunkError::Timeout(m) => (FailureReason::Timeout, m),
                    ChunkError::Transient(m) | ChunkError::Fatal(m) => (FailureReason::Error, m),
                };
                let attempts = chunk.attempt + 1;
                for (id, _) in &chunk.items {
                    self.fail(
                        id,
                        reason,
                        &format!("{message} (after {attempts} attempt(s))"),
                    );
                }
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
        });
    }

    /// Stops starting chunks; those not started finish as cancelled.
    pub fn cancel(&mut self) {
        self.cancelled = true;
        while let Some(chunk) = self.queue.pop_front() {
            for (id, _) in &chunk.items {
                self.fail(
                    id,
                    FailureReason::Cancelled,
                    "the batch was cancelled before it ran",
                );
            }
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
        self.in_flight == 0 && self.queue.is_empty()
    }

    /// The final report; successes and failures each in the caller's order.
    pub fn summary(&self, duration_ms: u64) -> BatchSummary {
        let mut all = self.outcomes.clone();
        all.sort_by_key(|o| self.order.get(&o.entity_id).copied().unwrap_or(usize::MAX));
        let (successes, failures): (Vec<_>, Vec<_>) = all.into_iter().partition(|o| o.success);
        BatchSummary {
            entity_type: self.entity_type.clone(),
            action_name: self.action_name.clone(),
            total: self.order.len() as u32,
            succeeded: successes.len() as u32,
            failed: failures.len() as u32,
            successes,
            failures,
            duration_ms,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ok(id: &str) -> EntityOutcome {
        EntityOutcome {
            entity_id: id.into(),
            success: true,
            changes: vec![],
            failure: None,
            log_id: None,
            replayed: false,
        }
    }

    fn ids(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("E{i:03}")).collect()
    }

    #[test]
    fn dedupes_chunks_and_bounds_concurrency() {
        let mut input = ids(25);
        input.push("E003".into());
        let options = BatchOptions {
            max_concurrent: 2,
            chunk_size: 10,
            ..Default::default()
        };
        let mut b = Batch::new("T", "a", &input, "L", options);
        assert_eq!(b.total(), 25);
        let c1 = b.start_next().unwrap();
        let c2 = b.start_next().unwrap();
        assert!(b.start_next().is_none(), "at most two in flight");
        assert_eq!(c1.items.len(), 10);
        let outcomes: Vec<_> = c1.items.iter().map(|(id, _)| ok(id)).collect();
        b.complete(c1, Ok(outcomes));
        assert_eq!(b.take_progress().len(), 10);
        assert!(b.take_progress().is_empty());
        let c3 = b.start_next().unwrap();
        assert_eq!(c3.items.len(), 5);
        b.complete(
            c2.clone(),
            Ok(c2.items.iter().map(|(id, _)| ok(id)).collect()),
        );
        b.complete(
            c3.clone(),
            Ok(c3.items.iter().map(|(id, _)| ok(id)).collect()),
        );
        assert!(b.is_finished());
        let s = b.summary(5);
        assert_eq!((s.total, s.succeeded, s.failed), (25, 25, 0));
        assert_eq!(s.successes[0].entity_id, "E000");
    }

    #[test]
    fn retries_transient_errors_only_then_reports_each_entity() {
        let options = BatchOptions {
            max_retries: 1,
            ..Default::default()
        };
        let mut b = Batch::new("T", "a", &ids(3), "L", options);
        let c = b.start_next().unwrap();
        b.complete(c, Err(ChunkError::Transient("deadlock".into())));
        let c = b.start_next().expect("retried");
        assert_eq!(c.attempt, 1);
        b.complete(c, Err(ChunkError::Timeout("deadline".into())));
        assert!(b.is_finished());
        let s = b.summary(0);
        assert_eq!(s.failed, 3);
        assert_eq!(
            s.failures[0].failure.as_ref().unwrap().reason,
            FailureReason::Timeout
        );

        let mut b = Batch::new("T", "a", &ids(2), "L", BatchOptions::default());
        let c = b.start_next().unwrap();
        b.complete(c, Err(ChunkError::Fatal("syntax".into())));
        assert!(b.is_finished(), "fatal errors are not retried");
    }

    #[test]
    fn missing_rows_and_cancellation_are_reported() {
        let options = BatchOptions {
            chunk_size: 2,
            max_concurrent: 1,
            ..Default::default()
        };
        let mut b = Batch::new("T", "a", &ids(4), "L", options);
        let c = b.start_next().unwrap();
        b.complete(c, Ok(vec![ok("E000")]));
        b.cancel();
        assert!(b.is_finished());
        let s = b.summary(0);
        assert_eq!((s.succeeded, s.failed), (1, 3));
        let reasons: Vec<_> = s
            .failures
            .iter()
            .map(|f| f.failure.as_ref().unwrap().reason)
            .collect();
        assert_eq!(
            reasons,
            [
                FailureReason::Error,
                FailureReason::Cancelled,
                FailureReason::Cancelled
            ]
        );
    }

    proptest! {
        /// Whatever the ids, chunk size, concurrency and failures: every distinct id gets
        /// exactly one outcome, and in-flight chunks never exceed the bound.
        #[test]
        fn every_distinct_id_gets_exactly_one_outcome(
            raw in proptest::collection::vec(0u8..40, 0..120),
            chunk_size in 1u32..20,
            max_concurrent in 1u32..5,
            failures in proptest::collection::vec(0u8..4, 0..200),
        ) {
            let input: Vec<String> = raw.iter().map(|i| format!("E{i}")).collect();
            let options = BatchOptions { chunk_size, max_concurrent, max_retries: 1, ..Default::default() };
            let mut b = Batch::new("T", "a", &input, "L", options);
            let mut fate = failures.into_iter().cycle();
            let mut flying = Vec::new();
            loop {
                while let Some(c) = b.start_next() { flying.push(c); }
                prop_assert!(b.in_flight() <= max_concurrent as usize);
                let Some(c) = flying.pop() else { break };
                let result = match fate.next().unwrap_or(0) {
                    1 => Err(ChunkError::Transient("x".into())),
                    2 => Err(ChunkError::Fatal("x".into())),
                    _ => Ok(c.items.iter().map(|(id, _)| ok(id)).collect()),
                };
                b.complete(c, result);
            }
            prop_assert!(b.is_finished());
            let s = b.summary(0);
            let distinct: HashSet<&String> = input.iter().collect();
            prop_assert_eq!(s.total as usize, distinct.len());
            prop_assert_eq!((s.succeeded + s.failed) as usize, distinct.len());
            let mut seen = HashSet::new();
            for o in s.successes.iter().chain(&s.failures) {
                prop_assert!(seen.insert(o.entity_id.clone()), "duplicate outcome");
            }
        }
    }
}
