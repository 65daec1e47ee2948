//! Time inside the component: waits, durations and wall-clock timestamps.

use std::time::{Duration, SystemTime, UNIX_EPOCH};
use wasi::clocks::monotonic_clock;

/// Completes `ms` milliseconds after it is created.
pub fn sleep(ms: u32) -> kg_spin::Sleep {
    kg_spin::sleep(Duration::from_millis(u64::from(ms)))
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
