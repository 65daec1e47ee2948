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
        undone: None,
    }
}

fn uncertain(settles_at_ms: u64) -> ChunkError {
    ChunkError::Uncertain(Uncertain {
        message: "no answer within 100 ms".into(),
        settles_at_ms,
    })
}

fn reasons(s: &BatchSummary) -> Vec<FailureReason> {
    s.failures
        .iter()
        .map(|f| {
            f.failure
                .as_ref()
                .map_or(FailureReason::Error, |f| f.reason)
        })
        .collect()
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
    let c1 = b.start_next(0).unwrap();
    let c2 = b.start_next(0).unwrap();
    assert!(b.start_next(0).is_none(), "at most two in flight");
    assert_eq!(c1.items.len(), 10);
    let outcomes: Vec<_> = c1.items.iter().map(|(id, _)| ok(id)).collect();
    b.complete(c1, Ok(outcomes));
    assert_eq!(b.take_progress().len(), 10);
    assert!(b.take_progress().is_empty());
    let c3 = b.start_next(0).unwrap();
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
    let c = b.start_next(0).unwrap();
    b.complete(c, Err(ChunkError::Transient("deadlock".into())));
    let c = b.start_next(0).expect("retried");
    assert_eq!(c.attempt, 1);
    b.complete(c, Err(ChunkError::Refused("connection refused".into())));
    assert!(b.is_finished());
    let s = b.summary(0);
    assert_eq!((s.failed, s.unknown), (3, 0));
    let message = &s.failures[0].failure.as_ref().unwrap().message;
    assert!(message.starts_with("not applied"), "{message}");

    let mut b = Batch::new("T", "a", &ids(2), "L", BatchOptions::default());
    let c = b.start_next(0).unwrap();
    b.complete(c, Err(ChunkError::Fatal("syntax".into())));
    assert!(b.is_finished(), "fatal errors are not retried");
}

#[test]
fn an_unanswered_chunk_is_never_reported_failed_from_the_error_alone() {
    let options = BatchOptions {
        max_retries: 1,
        ..Default::default()
    };
    let mut b = Batch::new("T", "a", &ids(3), "L", options);
    let c = b.start_next(0).unwrap();
    b.complete(c, Err(uncertain(500)));
    let c = b.start_next(0).expect("retried");
    assert_eq!(c.uncertain.as_ref().map(|u| u.settles_at_ms), Some(500));
    b.complete(c, Err(ChunkError::Refused("refused".into())));
    assert!(!b.is_finished(), "waits for reconciliation");
    assert!(b.take_progress().is_empty(), "nothing reported yet");
    let job = b.start_reconcile().expect("reconcile the chunk");
    assert_eq!(job.items.len(), 3);
    assert!(b.start_reconcile().is_none());
    // The log shows E000 applied; read late enough, so E001 and E002 were not.
    b.complete_reconcile(
        job,
        Settled::Final {
            applied: vec![ok("E000")],
        },
    );
    assert!(b.is_finished());
    let s = b.summary(0);
    assert_eq!((s.succeeded, s.failed, s.unknown), (1, 2, 0));
    assert_eq!(
        reasons(&s),
        [FailureReason::Timeout, FailureReason::Timeout]
    );
}

#[test]
fn a_log_that_cannot_be_read_leaves_the_outcome_unknown() {
    let options = BatchOptions {
        max_retries: 0,
        ..Default::default()
    };
    let mut b = Batch::new("T", "a", &ids(2), "L", options);
    let c = b.start_next(0).unwrap();
    b.complete(c, Err(uncertain(0)));
    let job = b.start_reconcile().unwrap();
    b.complete_reconcile(
        job,
        Settled::Open {
            applied: vec![ok("E001")],
            why: "the graph did not answer".into(),
        },
    );
    let s = b.summary(0);
    assert_eq!((s.total, s.succeeded, s.failed, s.unknown), (2, 1, 0, 1));
    assert_eq!(reasons(&s), [FailureReason::Unknown]);
    assert!(is_unknown(&s.failures[0]));
}

#[test]
fn the_breaker_stops_the_batch_and_reports_the_rest_not_attempted() {
    let options = BatchOptions {
        chunk_size: 1,
        max_concurrent: 1,
        max_retries: 5,
        ..Default::default()
    };
    let guards = Guards {
        deadline_ms: None,
        breaker_after: 3,
    };
    let mut b = Batch::new("T", "a", &ids(10), "L", options).with_guards(guards);
    let c = b.start_next(0).unwrap();
    b.complete(c.clone(), Ok(vec![ok("E000")]));
    for _ in 0..3 {
        let c = b.start_next(0).expect("a retry of E001");
        assert_eq!(c.items[0].0, "E001");
        b.complete(c, Err(ChunkError::Refused("refused".into())));
    }
    assert!(b.graph_unreachable());
    assert!(
        b.start_next(0).is_none(),
        "no chunk starts once the breaker is open"
    );
    assert!(b.is_finished());
    let s = b.summary(0);
    assert_eq!((s.succeeded, s.failed, s.unknown), (1, 9, 0));
    let r = reasons(&s);
    assert_eq!(r[0], FailureReason::Error, "E001 was tried: {r:?}");
    assert!(
        r[1..].iter().all(|r| *r == FailureReason::NotAttempted),
        "{r:?}"
    );
}

#[test]
fn the_deadline_stops_starting_chunks_but_reconciles_sent_ones() {
    let options = BatchOptions {
        chunk_size: 1,
        max_concurrent: 2,
        ..Default::default()
    };
    let guards = Guards {
        deadline_ms: Some(1_000),
        breaker_after: 0,
    };
    let mut b = Batch::new("T", "a", &ids(5), "L", options).with_guards(guards);
    let c0 = b.start_next(10).unwrap();
    let c1 = b.start_next(10).unwrap();
    b.complete(c0, Ok(vec![ok("E000")]));
    b.complete(c1, Err(uncertain(900)));
    assert!(b.start_next(1_000).is_none(), "the deadline passed");
    let job = b.start_reconcile().expect("E001 may have been applied");
    assert_eq!(job.items[0].0, "E001");
    b.complete_reconcile(
        job,
        Settled::Final {
            applied: vec![ok("E001")],
        },
    );
    assert!(b.is_finished());
    let s = b.summary(0);
    assert_eq!((s.succeeded, s.failed), (2, 3));
    assert!(
        reasons(&s)
            .iter()
            .all(|r| *r == FailureReason::NotAttempted)
    );
}

#[test]
fn missing_rows_and_cancellation_are_reported() {
    let options = BatchOptions {
        chunk_size: 2,
        max_concurrent: 1,
        ..Default::default()
    };
    let mut b = Batch::new("T", "a", &ids(4), "L", options);
    let c = b.start_next(0).unwrap();
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
    /// Whatever the ids, chunk size, concurrency, guards and faults, against a model graph
    /// (an unanswered attempt may or may not have applied): every distinct id gets exactly
    /// one outcome; in-flight chunks never exceed the bound; a reported success was
    /// applied; and an applied entity is never reported failed (success or unknown only).
    #[test]
    fn outcomes_are_complete_and_never_failed_for_an_applied_effect(
        raw in proptest::collection::vec(0u8..40, 0..120),
        chunk_size in 1u32..20,
        max_concurrent in 1u32..5,
        fixed in any::<bool>(),
        max_retries in 0u32..3,
        breaker_after in 0u32..4,
        deadline in proptest::option::of(0u64..40),
        faults in proptest::collection::vec(0u8..6, 1..200),
        reads in proptest::collection::vec(0u8..3, 1..50),
    ) {
        let input: Vec<String> = raw.iter().map(|i| format!("E{i}")).collect();
        let options = BatchOptions { chunk_size, max_concurrent, max_retries, ..Default::default() };
        let guards = Guards { deadline_ms: deadline, breaker_after };
        let concurrency = if fixed { Concurrency::Fixed } else { Concurrency::Adaptive };
        let mut b = Batch::new("T", "a", &input, "L", options)
            .with_guards(guards)
            .with_concurrency(concurrency);
        let mut fault = faults.into_iter().cycle();
        let mut read = reads.into_iter().cycle();
        let mut applied: HashSet<String> = HashSet::new();
        let mut flying = Vec::new();
        let mut now = 0u64;
        loop {
            now += 1;
            while let Some(c) = b.start_next(now) { flying.push(c); }
            prop_assert!(b.in_flight() <= max_concurrent as usize);
            prop_assert!((1..=max_concurrent).contains(&b.window()));
            if let Some(job) = b.start_reconcile() {
                let found: Vec<EntityOutcome> = job.items.iter()
                    .filter(|(id, _)| applied.contains(id)).map(|(id, _)| ok(id)).collect();
                let settled = match read.next().unwrap_or(0) {
                    0 => Settled::Final { applied: found },
                    1 => Settled::Open { applied: found, why: "x".into() },
                    _ => Settled::Open { applied: Vec::new(), why: "x".into() },
                };
                b.complete_reconcile(job, settled);
                continue;
            }
            let Some(c) = flying.pop() else { break };
            let result = match fault.next().unwrap_or(0) {
                1 => Err(ChunkError::Transient("x".into())),
                2 => Err(ChunkError::Fatal("x".into())),
                3 => Err(ChunkError::Refused("x".into())),
                4 => Err(uncertain(now)),
                5 => {
                    applied.extend(c.items.iter().map(|(id, _)| id.clone()));
                    Err(uncertain(now))
                }
                _ => {
                    applied.extend(c.items.iter().map(|(id, _)| id.clone()));
                    Ok(c.items.iter().map(|(id, _)| ok(id)).collect())
                }
            };
            b.complete(c, result);
        }
        prop_assert!(b.is_finished());
        let s = b.summary(0);
        let distinct: HashSet<&String> = input.iter().collect();
        prop_assert_eq!(s.total as usize, distinct.len());
        prop_assert_eq!((s.succeeded + s.failed + s.unknown) as usize, distinct.len());
        let mut seen = HashSet::new();
        for o in s.successes.iter().chain(&s.failures) {
            prop_assert!(seen.insert(o.entity_id.clone()), "duplicate outcome");
        }
        for o in &s.successes {
            prop_assert!(applied.contains(&o.entity_id), "{} reported applied", o.entity_id);
        }
        for o in &s.failures {
            prop_assert!(
                is_unknown(o) || !applied.contains(&o.entity_id),
                "{} was applied but reported {:?}", o.entity_id, o.failure
            );
        }
    }
}

#[test]
fn the_window_backs_off_on_deadlocks_and_grows_on_clean_chunks() {
    let options = BatchOptions {
        chunk_size: 1,
        max_concurrent: 10,
        ..Default::default()
    };
    let answer = |c: &Chunk| Ok(vec![ok(&c.items[0].0)]);
    let mut b = Batch::new("T", "a", &ids(80), "L", options);
    let start_all = |b: &mut Batch| std::iter::from_fn(|| b.start_next(0)).collect::<Vec<_>>();
    let first = start_all(&mut b);
    assert_eq!(first.len(), 2, "a modest start");
    for c in first {
        let result = answer(&c);
        b.complete(c, result);
    }
    assert_eq!(b.window(), 3, "a window's worth of clean chunks adds one");
    // The next round all deadlocks (one contention event): halved once, the retries first.
    let round = start_all(&mut b);
    assert_eq!(round.len(), 3);
    for c in round {
        b.complete(c, Err(ChunkError::Transient("DeadlockDetected".into())));
    }
    assert_eq!(b.window(), 2);
    let retries = start_all(&mut b);
    assert_eq!(
        retries.iter().map(|c| c.attempt).collect::<Vec<_>>(),
        [1, 1]
    );
    for c in retries {
        let result = answer(&c);
        b.complete(c, result);
    }
    assert_eq!(
        b.window(),
        2,
        "after contention a step up takes four clean chunks"
    );
    // Clean chunks from here on: the window climbs to the ceiling, one per window's worth
    // of them, or the patience's four up to where contention came.
    let mut widest = 0;
    while !b.is_finished() {
        let wave = start_all(&mut b);
        widest = widest.max(b.in_flight());
        for c in wave {
            let result = answer(&c);
            b.complete(c, result);
        }
    }
    assert_eq!(widest, 10);
    assert_eq!(b.summary(0).succeeded, 80);
    // Fixed: the ceiling from the start, whatever the graph answers.
    let mut b = Batch::new("T", "a", &ids(40), "L", options).with_concurrency(Concurrency::Fixed);
    let first = start_all(&mut b);
    assert_eq!(first.len(), 10);
    for c in first {
        b.complete(c, Err(ChunkError::Transient("DeadlockDetected".into())));
    }
    let retries = start_all(&mut b);
    assert_eq!((b.window(), retries.len()), (10, 10));
}

#[test]
fn a_transient_error_is_retried_beyond_max_retries_and_then_fails_the_chunk() {
    let options = BatchOptions {
        chunk_size: 2,
        max_concurrent: 1,
        max_retries: 0,
        ..Default::default()
    };
    let mut b = Batch::new("T", "a", &ids(2), "L", options);
    for attempt in 0..=TRANSIENT_RETRIES {
        let c = b.start_next(0).expect("the chunk, again");
        assert_eq!(c.attempt, attempt);
        b.complete(c, Err(ChunkError::Transient("DeadlockDetected".into())));
    }
    assert!(b.start_next(0).is_none(), "the budget is spent");
    assert!(b.is_finished());
    let s = b.summary(0);
    assert_eq!((s.succeeded, s.failed), (0, 2));
    let message = &s.failures[0].failure.as_ref().unwrap().message;
    assert!(
        message.contains(&format!("after {} attempt(s)", TRANSIENT_RETRIES + 1)),
        "{message}"
    );
    // An unanswered chunk keeps `max_retries` (0): it goes straight to reconciliation.
    let mut b = Batch::new("T", "a", &ids(1), "L", options);
    let c = b.start_next(0).unwrap();
    b.complete(
        c,
        Err(ChunkError::Uncertain(Uncertain {
            message: "no answer".into(),
            settles_at_ms: 0,
        })),
    );
    assert!(b.start_next(0).is_none());
    assert!(b.start_reconcile().is_some());
}

#[test]
fn a_chunk_rolled_back_after_a_cancel_is_cancelled_like_a_queued_retry() {
    let options = BatchOptions {
        chunk_size: 2,
        max_concurrent: 2,
        ..Default::default()
    };
    let mut b = Batch::new("T", "a", &ids(4), "L", options);
    let first = b.start_next(0).unwrap();
    let second = b.start_next(0).unwrap();
    b.cancel();
    // One answer arrives after the cancel: applied; the other rolled back (a deadlock).
    b.complete(first, Ok(vec![ok("E000"), ok("E001")]));
    b.complete(
        second,
        Err(ChunkError::Transient("DeadlockDetected".into())),
    );
    assert!(b.start_next(0).is_none(), "no retry after a cancel");
    assert!(b.is_finished());
    let s = b.summary(0);
    assert_eq!((s.succeeded, s.failed), (2, 2));
    assert_eq!(
        reasons(&s),
        [FailureReason::Cancelled, FailureReason::Cancelled]
    );
    let message = &s.failures[0].failure.as_ref().unwrap().message;
    assert!(message.contains("DeadlockDetected"), "{message}");
}
