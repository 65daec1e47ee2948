//! Time and ids inside the dispatcher.

use std::time::{SystemTime, UNIX_EPOCH};

pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_millis(SystemTime::now()).to_string()
}

/// `<millis:013>-<random:016x>`: sorts by time, unique across instances.
pub fn unique_suffix() -> String {
    let millis = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    format!(
        "{millis:013}-{:016x}",
        wasi::random::random::get_random_u64()
    )
}

pub fn unique_id(prefix: &str) -> String {
    format!("{prefix}-{}", unique_suffix())
}
