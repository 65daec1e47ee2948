//! Time for deadlines and backoff, behind a trait so tests run without waiting.

use std::time::{Duration, Instant};

pub trait Clock {
    /// Time since an arbitrary fixed point (monotonic).
    fn elapsed(&self) -> Duration;
    fn sleep(&self, duration: Duration);
}

/// The real clock: `Instant` and `thread::sleep` (on wasm32-wasip2 both are WASI's
/// monotonic clock).
pub struct SystemClock {
    origin: Instant,
}

impl SystemClock {
    pub fn new() -> Self {
        SystemClock {
            origin: Instant::now(),
        }
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for SystemClock {
    fn elapsed(&self) -> Duration {
        self.origin.elapsed()
    }

    fn sleep(&self, duration: Duration) {
        std::thread::sleep(duration);
    }
}
