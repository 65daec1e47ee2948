//! The turn's deadline (`agent_turn_deadline_ms`): once it has passed, the turn starts no
//! further router, LLM, tool or summariser call, and a pending LLM call is cut — through
//! the same checks that stop a turn whose client left ([`EventSink::gone`]), so no new
//! polling is needed. The bounded sink tells the two apart ([`EventSink::stop`]), so a
//! departed client is `client_gone` and a turn out of time is `turn_deadline_exceeded`.
//!
//! A running action batch is not cut by it: a batch has its own `action_batch_deadline_ms`
//! and stops starting chunks only when the client leaves; the turn then ends with the
//! deadline error instead of the batch's written report.

use super::ports::{DeadlineClock, EventSink, Stop};
use crate::events::Event;
use kg_http::ApiError;

/// How long a turn may reason, measured on [`DeadlineClock::monotonic_ms`] from
/// `started_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadline {
    /// 0: no deadline.
    pub ms: u64,
    /// When the turn began, on the same clock.
    pub started_ms: u64,
}

impl Deadline {
    pub const NONE: Deadline = Deadline {
        ms: 0,
        started_ms: 0,
    };

    /// The monotonic ms at which the turn is out of time; `None` without a deadline.
    pub fn end_ms(&self) -> Option<u64> {
        (self.ms > 0).then(|| self.started_ms.saturating_add(self.ms))
    }
}

/// The error a turn ends with when its deadline passed: 504, naming the deadline in
/// seconds and the reasoning steps that ran.
pub fn deadline_exceeded(deadline_ms: u64, steps: u32) -> ApiError {
    let seconds = deadline_ms as f64 / 1000.0;
    ApiError::new(
        504,
        "turn_deadline_exceeded",
        format!(
            "the turn did not finish within its {seconds} s deadline (agent_turn_deadline_ms); it stopped after {steps} reasoning step{}",
            if steps == 1 { "" } else { "s" }
        ),
    )
    .with_detail(serde_json::json!({"deadline_ms": deadline_ms, "steps": steps}))
}

/// A sink whose turn must stop once `deadline` passes, as well as when the client leaves.
/// Counts the reasoning steps that completed (their `trace` events), for the error.
pub struct Bounded<'a> {
    inner: &'a mut dyn EventSink,
    clock: &'a dyn DeadlineClock,
    deadline: Deadline,
    steps: u32,
}

impl<'a> Bounded<'a> {
    pub fn new(
        inner: &'a mut dyn EventSink,
        clock: &'a dyn DeadlineClock,
        deadline: Deadline,
    ) -> Self {
        Bounded {
            inner,
            clock,
            deadline,
            steps: 0,
        }
    }

    fn out_of_time(&self) -> bool {
        self.deadline
            .end_ms()
            .is_some_and(|end| self.clock.monotonic_ms() >= end)
    }
}

impl EventSink for Bounded<'_> {
    fn emit(&mut self, event: Event) {
        if let Event::Trace(trace) = &event
            && trace["kind"] == "step"
        {
            self.steps += 1;
        }
        self.inner.emit(event);
    }
    fn gone(&self) -> bool {
        self.stop().is_some()
    }
    /// A departed client wins: nobody would read the deadline's error.
    fn stop(&self) -> Option<Stop> {
        if self.inner.gone() {
            Some(Stop::ClientGone)
        } else if self.out_of_time() {
            Some(Stop::Deadline {
                deadline_ms: self.deadline.ms,
                steps: self.steps,
            })
        } else {
            None
        }
    }
    fn streaming(&self) -> bool {
        self.inner.streaming()
    }
    fn heartbeat(&mut self) {
        self.inner.heartbeat();
    }
    fn retract_content(&mut self) {
        self.inner.retract_content();
    }
}
