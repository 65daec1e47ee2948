//! `--server-timing`: where a future's wall time goes between its polls. A component's
//! handler is one future (wasmtime runs the guest on a fiber inside it); when a host call
//! must wait (an outbound response, a body frame, a timer) the fiber suspends and the
//! future returns `Pending`. Its wall time is then three parts:
//!
//! - running: inside `poll` (the guest's code and the host calls that return at once);
//! - blocked: from returning `Pending` until something wakes it (I/O, a timer, a channel);
//! - queued: from the wake until a tokio worker polls it again (scheduling).
//!
//! The wake is seen by handing the inner future a waker that notes when it fires.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

/// What one future spent, in ns (added to while it runs, read when the header is made).
#[derive(Default)]
pub struct PollTimes {
    running_ns: AtomicU64,
    blocked_ns: AtomicU64,
    queued_ns: AtomicU64,
    /// Times it returned `Pending`.
    waits: AtomicU64,
}

impl PollTimes {
    pub fn running(&self) -> Duration {
        Duration::from_nanos(self.running_ns.load(Ordering::Relaxed))
    }
    pub fn blocked(&self) -> Duration {
        Duration::from_nanos(self.blocked_ns.load(Ordering::Relaxed))
    }
    pub fn queued(&self) -> Duration {
        Duration::from_nanos(self.queued_ns.load(Ordering::Relaxed))
    }
    pub fn waits(&self) -> u64 {
        self.waits.load(Ordering::Relaxed)
    }
}

fn add(counter: &AtomicU64, took: Duration) {
    let ns = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
    counter.fetch_add(ns, Ordering::Relaxed);
}

/// The waker handed to the inner future: notes the first wake after a `Pending`.
struct Noting {
    inner: Waker,
    woken_at: Mutex<Option<Instant>>,
}

impl Wake for Noting {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        {
            let mut at = self.woken_at.lock().unwrap_or_else(|p| p.into_inner());
            at.get_or_insert_with(Instant::now);
        }
        self.inner.wake_by_ref();
    }
}

/// `future`, its time split into running, blocked and queued on `times`.
pub fn polled<F: Future>(future: F, times: Arc<PollTimes>) -> Polled<F> {
    Polled {
        future: Box::pin(future),
        times,
        noting: None,
        pended_at: None,
    }
}

pub struct Polled<F> {
    future: Pin<Box<F>>,
    times: Arc<PollTimes>,
    noting: Option<Arc<Noting>>,
    pended_at: Option<Instant>,
}

impl<F: Future> Future for Polled<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let me = &mut *self;
        let started = Instant::now();
        let woken_at = me
            .noting
            .as_ref()
            .and_then(|n| n.woken_at.lock().unwrap_or_else(|p| p.into_inner()).take());
        if let Some(pended) = me.pended_at.take() {
            // Polled without a wake of ours (the task woken for another reason): all of
            // the gap counts as blocked.
            let woken = woken_at.unwrap_or(started);
            add(
                &me.times.blocked_ns,
                woken.saturating_duration_since(pended),
            );
            add(
                &me.times.queued_ns,
                started.saturating_duration_since(woken),
            );
        }
        let noting = match &me.noting {
            Some(n) if n.inner.will_wake(cx.waker()) => n.clone(),
            _ => {
                let n = Arc::new(Noting {
                    inner: cx.waker().clone(),
                    woken_at: Mutex::new(None),
                });
                me.noting = Some(n.clone());
                n
            }
        };
        let waker = Waker::from(noting);
        let result = me.future.as_mut().poll(&mut Context::from_waker(&waker));
        let ended = Instant::now();
        add(&me.times.running_ns, ended - started);
        if result.is_pending() {
            me.pended_at = Some(ended);
            me.times.waits.fetch_add(1, Ordering::Relaxed);
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_sleep_is_blocked_time_not_running_time() {
        let times = Arc::new(PollTimes::default());
        polled(tokio::time::sleep(Duration::from_millis(20)), times.clone()).await;
        assert!(
            times.blocked() >= Duration::from_millis(15),
            "{:?}",
            times.blocked()
        );
        assert!(
            times.running() < Duration::from_millis(5),
            "{:?}",
            times.running()
        );
        assert_eq!(times.waits(), 1);
    }

    #[tokio::test]
    async fn a_busy_future_is_running_time() {
        let times = Arc::new(PollTimes::default());
        polled(
            async { std::thread::sleep(Duration::from_millis(10)) },
            times.clone(),
        )
        .await;
        assert!(times.running() >= Duration::from_millis(10));
        assert_eq!(times.waits(), 0);
        assert_eq!(times.blocked(), Duration::ZERO);
    }
}
