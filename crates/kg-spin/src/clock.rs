//! Time and ids inside a component: wall-clock timestamps, monotonic durations, and ids
//! that sort by time and are unique across instances.

use std::time::{Duration, SystemTime, UNIX_EPOCH};
use wasi::clocks::monotonic_clock;

/// Now as RFC 3339 with milliseconds (UTC), e.g. `2026-11-23T04:05:06.789Z`.
pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_millis(SystemTime::now()).to_string()
}

/// `d` in nanoseconds, the monotonic clock's unit; a duration too long for it (say
/// `Duration::MAX`, "no limit") saturates to the clock's end.
pub fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Milliseconds on the monotonic clock, for durations.
pub fn monotonic_ms() -> u64 {
    monotonic_clock::now() / 1_000_000
}

/// `<millis:013>-<random:016x>`: sorts by time; 64 random bits against collisions across
/// instances.
pub fn unique_suffix() -> String {
    let millis = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    format!(
        "{millis:013}-{:016x}",
        wasi::random::random::get_random_u64()
    )
}

/// `<millis:013><micros-in-milli:03>-<random:016x>`: like [`unique_suffix`] with
/// microseconds, for keys whose order matters within one request (a conversation's user
/// turn and the answer written a few microseconds later). Its first 13 digits are the
/// milliseconds, so it sorts after every `unique_suffix` key of an earlier millisecond.
pub fn ordered_suffix() -> String {
    let micros = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros());
    format!(
        "{micros:016}-{:016x}",
        wasi::random::random::get_random_u64()
    )
}

/// `<prefix>-<millis>-<random>`.
pub fn unique_id(prefix: &str) -> String {
    format!("{prefix}-{}", unique_suffix())
}

/// `<prefix>_<64 hex>`: 256 random bits, for bearer secrets such as approval tokens
/// (an id from [`unique_id`] has only 64 random bits and a guessable time part).
pub fn secret_token(prefix: &str) -> String {
    let bytes = wasi::random::random::get_random_bytes(32);
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("{prefix}_{hex}")
}

/// Milliseconds since the Unix epoch (wall clock), for expiries compared in the graph.
pub fn epoch_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// RFC 3339 (milliseconds, UTC) of an epoch-milliseconds instant.
pub fn rfc3339_of_ms(ms: i64) -> String {
    let at = UNIX_EPOCH + std::time::Duration::from_millis(u64::try_from(ms).unwrap_or(0));
    humantime::format_rfc3339_millis(at).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_convert_to_nanoseconds_and_saturate_past_the_clocks_range() {
        assert_eq!(nanos(Duration::from_millis(20)), 20_000_000);
        assert_eq!(nanos(Duration::ZERO), 0);
        assert_eq!(nanos(Duration::MAX), u64::MAX);
    }
}
