//! Time inside the component: a sleep future on the WASI monotonic clock that spin-sdk's
//! executor can wait on together with outbound HTTP, and wall-clock timestamps.

use spin_executor::CancelOnDropToken;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{SystemTime, UNIX_EPOCH};
use wasi::clocks::monotonic_clock;

/// Completes `ms` milliseconds after it is created.
pub struct Sleep {
    deadline: u64,
    registration: Option<CancelOnDropToken>,
}

pub fn sleep(ms: u32) -> Sleep {
    Sleep {
        deadline: monotonic_clock::now() + u64::from(ms) * 1_000_000,
        registration: None,
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if monotonic_clock::now() >= self.deadline {
            return Poll::Ready(());
        }
        let pollable = monotonic_clock::subscribe_instant(self.deadline);
        // Replacing the token cancels the previous registration.
        self.registration =
            Some(spin_executor::push_waker_and_get_token(pollable, cx.waker().clone()).into());
        Poll::Pending
    }
}

/// Milliseconds on the monotonic clock, for durations.
pub fn monotonic_ms() -> u64 {
    monotonic_clock::now() / 1_000_000
}

/// Now as RFC 3339 with milliseconds (UTC), e.g. `2026-11-23T04:05:06.789Z`.
pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_millis(SystemTime::now()).to_string()
}

/// A fresh id: time-ordered, with 64 random bits against collisions across instances.
pub fn unique_id(prefix: &str) -> String {
    let millis = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    format!(
        "{prefix}-{millis:013}-{:016x}",
        wasi::random::random::get_random_u64()
    )
}
