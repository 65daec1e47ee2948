//! Per-subject limits (requests per minute, LLM tokens per day), counted in the
//! key-value store; see kg_http::limits for the windows and their precision.

use kg_http::ApiError;
use kg_http::limits::{Window, check, count, window_key};
use spin_sdk::key_value::Store;

fn now_s() -> u64 {
    u64::try_from(kg_spin::clock::epoch_ms() / 1000).unwrap_or(0)
}

fn store() -> Result<Store, ApiError> {
    Store::open_default()
        .map_err(|e| ApiError::new(503, "unavailable", format!("key-value store: {e}")))
}

/// Counts this request; `Err(429)` past `rate_limit_requests_per_minute`.
pub fn count_request(subject: &str) -> Result<(), ApiError> {
    let max = kg_spin::number_variable("rate_limit_requests_per_minute", 600);
    if max == 0 {
        return Ok(());
    }
    let store = store()?;
    let (key, retry) = window_key("req", subject, Window::Minute, now_s());
    let used = count(store.get(&key).ok().flatten().as_deref());
    check(used, max, "requests per minute", retry)?;
    // A failed write loses one count; it must not fail the request.
    let _ = store.set(&key, (used + 1).to_string().as_bytes());
    Ok(())
}

/// `Err(429)` when the subject has used its LLM tokens of the day.
pub fn check_tokens(subject: &str) -> Result<(), ApiError> {
    let max = kg_spin::number_variable("rate_limit_llm_tokens_per_day", 1_000_000);
    if max == 0 {
        return Ok(());
    }
    let (key, retry) = window_key("tok", subject, Window::Day, now_s());
    let used = count(store()?.get(&key).ok().flatten().as_deref());
    check(used, max, "LLM tokens per day", retry)
}

/// Adds a turn's LLM tokens to the subject's day.
pub fn add_tokens(subject: &str, tokens: u64) {
    if tokens == 0 {
        return;
    }
    let Ok(store) = store() else { return };
    let (key, _) = window_key("tok", subject, Window::Day, now_s());
    let used = count(store.get(&key).ok().flatten().as_deref());
    let _ = store.set(&key, used.saturating_add(tokens).to_string().as_bytes());
}
