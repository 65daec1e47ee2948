//! A timer future on the WASI monotonic clock that spin-sdk's executor waits on together
//! with outbound HTTP (spin-sdk itself has none).

use spin_executor::CancelOnDropToken;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use wasi::clocks::monotonic_clock;

/// Completes `duration` from now.
pub fn sleep(duration: Duration) -> Sleep {
    Sleep::new(duration)
}

/// Completes once the monotonic clock passes its deadline; spin-sdk's executor waits on
/// it together with outbound HTTP.
pub struct Sleep {
    deadline_ns: u64,
    registration: Option<CancelOnDropToken>,
}

impl Sleep {
    pub fn new(duration: Duration) -> Self {
        Sleep::until(monotonic_clock::now().saturating_add(crate::clock::nanos(duration)))
    }

    /// Completes once the monotonic clock reads `deadline_ns`: for a caller that has just
    /// read the clock itself (one host call less than [`Sleep::new`]).
    pub fn until(deadline_ns: u64) -> Self {
        Sleep {
            deadline_ns,
            registration: None,
        }
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if monotonic_clock::now() >= self.deadline_ns {
            return Poll::Ready(());
        }
        let pollable = monotonic_clock::subscribe_instant(self.deadline_ns);
        // Replacing the token cancels the previous registration.
        self.registration =
            Some(spin_executor::push_waker_and_get_token(pollable, cx.waker().clone()).into());
        Poll::Pending
    }
}
