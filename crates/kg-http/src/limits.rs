//! Per-subject limits counted in the key-value store (DESIGN.md §9): requests per minute
//! and LLM tokens per day, in fixed windows. Plain arithmetic here; the dispatcher counts
//! with the store's atomic increment (wasi:keyvalue), so the limits hold exactly however
//! many requests of one subject run at once, on however many instances share the store.

use crate::ApiError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    Minute,
    Day,
}

impl Window {
    fn seconds(self) -> u64 {
        match self {
            Window::Minute => 60,
            Window::Day => 86_400,
        }
    }
}

/// The counter's key for `subject` in the window containing `now_s`, and the seconds
/// until that window ends (the `Retry-After` of a refusal).
pub fn window_key(kind: &str, subject: &str, window: Window, now_s: u64) -> (String, u64) {
    let length = window.seconds();
    let index = now_s / length;
    // Hex keeps any subject (an email, a URL-like `sub`) a safe key.
    let hex: String = subject.bytes().map(|b| format!("{b:02x}")).collect();
    let key = format!("limit/{kind}/{hex}/{index}");
    (key, length - now_s % length)
}

/// A counter written by the store's atomic increment, as its backend keeps it: decimal
/// text (Redis's `INCRBY`) or 8 bytes little endian (Spin's SQLite store). Absent or
/// neither: 0 (a lost counter must not lock anyone out). Digits are read as text first:
/// 8 bytes that are all ASCII digits would be a counter above 3.4 × 10^18.
pub fn stored_counter(stored: Option<&[u8]>) -> u64 {
    let Some(bytes) = stored else { return 0 };
    if !bytes.is_empty() && bytes.iter().all(u8::is_ascii_digit) {
        return std::str::from_utf8(bytes)
            .ok()
            .and_then(|t| t.parse().ok())
            .unwrap_or(u64::MAX);
    }
    <[u8; 8]>::try_from(bytes)
        .map(|b| u64::try_from(i64::from_le_bytes(b)).unwrap_or(0))
        .unwrap_or(0)
}

/// `Err(429)` when `used` has reached `limit` (0 = unlimited).
pub fn check(used: u64, limit: u64, what: &str, retry_after: u64) -> Result<(), ApiError> {
    if limit == 0 || used < limit {
        return Ok(());
    }
    Err(ApiError::new(
        429,
        "rate_limited",
        format!("{what}: the limit is {limit}; try again in {retry_after} s"),
    )
    .with_detail(serde_json::json!({"limit": limit, "retry_after_s": retry_after})))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn windows_and_refusals() {
        let (key, retry) = window_key("req", "ann", Window::Minute, 120);
        assert_eq!(key, "limit/req/616e6e/2");
        assert_eq!(retry, 60);
        assert_eq!(window_key("req", "ann", Window::Minute, 179).1, 1);
        assert_eq!(stored_counter(None), 0);
        assert_eq!(stored_counter(Some(b"41")), 41);
        assert_eq!(stored_counter(Some(&41i64.to_le_bytes())), 41);
        assert_eq!(stored_counter(Some(&1_000_000i64.to_le_bytes())), 1_000_000);
        assert_eq!(
            stored_counter(Some(b"12345678")),
            12_345_678,
            "8 digits are text"
        );
        assert_eq!(stored_counter(Some(&(-3i64).to_le_bytes())), 0);
        assert_eq!(stored_counter(Some(b"garbage")), 0);
        assert_eq!(stored_counter(Some(b"")), 0);
        assert!(check(4, 5, "requests", 3).is_ok());
        let e = check(5, 5, "requests", 3).unwrap_err();
        assert_eq!((e.status, e.code.as_str()), (429, "rate_limited"));
        assert!(check(1_000_000, 0, "requests", 3).is_ok(), "0 = unlimited");
    }

    proptest! {
        #[test]
        fn retry_after_is_within_the_window(now in 0u64..10_000_000_000, day in any::<bool>()) {
            let w = if day { Window::Day } else { Window::Minute };
            let (_, retry) = window_key("x", "s", w, now);
            prop_assert!(retry >= 1 && retry <= w.seconds());
        }
    }
}
