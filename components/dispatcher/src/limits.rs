//! Per-subject limits (requests per minute, LLM tokens per day), counted in the
//! key-value store with wasi:keyvalue's atomic `increment` (Spin 3+, devhost): one step
//! that every instance sharing the store sees in order, so concurrent requests of one
//! subject on any number of instances never get past the limit (the read-modify-write
//! before could, by the number in flight). See kg_http::limits for the windows.

use kg_http::ApiError;
use kg_http::limits::{Window, check, stored_counter, window_key};
use spin_sdk::wit::wasi::keyvalue::atomics;

/// The counters' kinds in their keys. Not the `req`/`tok` of the read-modify-write
/// counters, which held decimal text: Spin's SQLite store keeps a counter as 8 bytes and
/// cannot increment anything else, so a window that began before an upgrade must not be
/// found under the same key.
const REQUESTS: &str = "requests";
const TOKENS: &str = "tokens";

fn now_s() -> u64 {
    u64::try_from(kg_spin::clock::epoch_ms() / 1000).unwrap_or(0)
}

/// Adds `delta` to the counter under `key` and answers its new value.
fn increment(key: &str, delta: u64) -> Result<u64, String> {
    let delta = i64::try_from(delta).unwrap_or(i64::MAX);
    let value =
        atomics::increment(&crate::kv::wasi_bucket()?, key, delta).map_err(|e| format!("{e:?}"))?;
    Ok(u64::try_from(value).unwrap_or(0))
}

/// Counts this request; `Err(429)` past `rate_limit_requests_per_minute`. A store that
/// cannot count admits the request (logged): a lost counter must not lock anyone out.
pub fn count_request(subject: &str) -> Result<(), ApiError> {
    let max = kg_spin::number_variable("rate_limit_requests_per_minute", 600);
    if max == 0 {
        return Ok(());
    }
    let (key, retry) = window_key(REQUESTS, subject, Window::Minute, now_s());
    match increment(&key, 1) {
        // This request is number `n` of its window: the ones before it are what it finds.
        Ok(n) => check(n.saturating_sub(1), max, "requests per minute", retry),
        Err(e) => {
            eprintln!("dispatcher: could not count a request: {e}");
            Ok(())
        }
    }
}

/// `Err(429)` when the subject has used its LLM tokens of the day. A plain read (an
/// increment by 0 would be a write transaction on SQLite): the counter in the form its
/// backend keeps it (`kg_http::limits::stored_counter`).
pub fn check_tokens(subject: &str) -> Result<(), ApiError> {
    let max = kg_spin::number_variable("rate_limit_llm_tokens_per_day", 1_000_000);
    if max == 0 {
        return Ok(());
    }
    let (key, retry) = window_key(TOKENS, subject, Window::Day, now_s());
    match crate::kv::wasi_bucket().and_then(|b| b.get(&key).map_err(|e| format!("{e:?}"))) {
        Ok(stored) => check(
            stored_counter(stored.as_deref()),
            max,
            "LLM tokens per day",
            retry,
        ),
        Err(e) => {
            eprintln!("dispatcher: could not read the token count: {e}");
            Ok(())
        }
    }
}

/// Adds a turn's LLM tokens to the subject's day.
pub fn add_tokens(subject: &str, tokens: u64) {
    if tokens == 0 {
        return;
    }
    let (key, _) = window_key(TOKENS, subject, Window::Day, now_s());
    if let Err(e) = increment(&key, tokens) {
        eprintln!("dispatcher: could not count a turn's tokens: {e}");
    }
}
