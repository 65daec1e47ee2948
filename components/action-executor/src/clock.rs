//! Waits inside the component; time and ids come from `kg_spin::clock`.

use std::time::Duration;

pub use kg_spin::clock::{epoch_ms, monotonic_ms, now_rfc3339, unique_id};

/// Completes `ms` milliseconds after it is created.
pub fn sleep(ms: u32) -> kg_spin::Sleep {
    kg_spin::sleep(Duration::from_millis(u64::from(ms)))
}
