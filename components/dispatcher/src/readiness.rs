//! `GET /health/ready`: the graph (`RETURN 1`, 5 s at most), the LLM (`GET {llm}/models`, its outcome
//! kept in the key-value store for `health_llm_cache_s`, 30 s by default, so probes do not
//! hammer a paid API) and the store itself (a read while a round trip of the last 30 s
//! vouches for writes, else a round trip: probes come every few seconds and writes are
//! what costs on Spin's default store), each timed. The dispatcher
//! reaches the graph and the LLM itself: both origins are on its allowed_outbound_hosts.

use crate::health::{kv_check_reading, now_unix_ms};
use kg_http::health::{KvHealth, KvStore};
use kg_http::readiness::{
    DEFAULT_LLM_CACHE_MS, DependencyCheck, LLM_PROBE_KEY, LlmProbeRecord, Readiness, redact,
};
use spin_sdk::http::Response;

pub fn handle() -> Response {
    let (status, body) = check().report();
    crate::json_response(status, &body)
}

/// All three checks, reasons redacted (the route is public).
pub fn check() -> Readiness {
    let origins = [
        (
            kg_spin::variable("neo4j_origin").unwrap_or_default(),
            "[graph]",
        ),
        (kg_spin::variable("llm_origin").unwrap_or_default(), "[llm]"),
    ];
    let origins: Vec<(&str, &str)> = origins.iter().map(|(o, l)| (o.as_str(), *l)).collect();
    let hide = |mut check: DependencyCheck| {
        check.error = check.error.map(|e| redact(&e, &origins));
        check
    };
    let (kv, kv_ms) = timed(kv_check_reading);
    let kv = match kv {
        KvHealth::Ok { .. } => DependencyCheck::up(kv_ms),
        KvHealth::Failed { reason, .. } => DependencyCheck::down(kv_ms, reason),
    };
    Readiness {
        graph: hide(graph()),
        llm: hide(llm()),
        kv,
    }
}

fn graph() -> DependencyCheck {
    match timed(kg_spin::graph_probe) {
        (Ok(()), ms) => DependencyCheck::up(ms),
        (Err(e), ms) => DependencyCheck::down(ms, e),
    }
}

/// The cached outcome when there is a fresh one for this LLM, else a new probe (stored
/// for the next callers). A store that cannot be read or written only costs the cache.
pub fn llm() -> DependencyCheck {
    let url = match kg_spin::llm_models_url() {
        Ok(url) => url,
        Err(e) => return DependencyCheck::down(0.0, e),
    };
    let ttl_ms = kg_spin::number_variable("health_llm_cache_s", DEFAULT_LLM_CACHE_MS / 1000)
        .saturating_mul(1000);
    let store = crate::kv::SpinKv::open().ok();
    let now = now_unix_ms();
    if let Some(store) = &store
        && let Ok(Some(bytes)) = store.get(LLM_PROBE_KEY)
        && let Some(record) = LlmProbeRecord::reusable(&bytes, &url, now, ttl_ms)
    {
        return record.check(now, false);
    }
    let (outcome, ms) = timed(kg_spin::llm_probe);
    let record = LlmProbeRecord {
        base_url: url,
        ok: outcome.is_ok(),
        latency_ms: ms,
        error: outcome.err(),
        at_unix_ms: now,
    };
    if let Some(store) = &store
        && let Err(e) = store.set(LLM_PROBE_KEY, &record.to_bytes())
    {
        eprintln!("dispatcher: could not cache the LLM probe: {e}");
    }
    record.check(now, true)
}

/// `work`'s result and how long it took, in milliseconds (monotonic clock).
fn timed<T>(work: impl FnOnce() -> T) -> (T, f64) {
    let started = wasi::clocks::monotonic_clock::now();
    let out = work();
    let elapsed = wasi::clocks::monotonic_clock::now().saturating_sub(started);
    (out, elapsed as f64 / 1_000_000.0)
}
