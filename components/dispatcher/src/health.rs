//! `GET /health`: asks every dependency component for its status over WIT and round-trips
//! the key-value store under a key of its own (see `kg_http::health::kv_round_trip`).

use crate::kv::{STORE, SpinKv};
use kg_http::health::{
    KV_WRITE_PROOF_MS, KvHealth, catalog_version, kv_check_reading as kv_check_reading_on,
    kv_round_trip, report,
};
use kg_wit::kg::{
    action_executor::action_executor, query_tools::query_tools, retriever::retriever,
    router::router, summariser::summariser,
};
use spin_sdk::http::Response;

pub fn handle() -> Response {
    let components = [
        router::status(),
        query_tools::status(),
        action_executor::status(),
        retriever::status(),
        summariser::status(),
    ];
    let kv = kv_check();
    let (status, mut body) = report(env!("CARGO_PKG_VERSION"), &components, &kv);
    // Listed, not counted in the status: `/health/ready` is the verdict that needs the
    // LLM; here it is what an operator reads next to the components.
    body["llm"] = crate::readiness::llm().to_json();
    body["catalog_version"] = serde_json::json!(catalog_version(&components));
    body["prompts"] = crate::prompts::versions();
    crate::json_response(status, &body)
}

/// One round trip under a key unique to this check (time plus 64 random bits), so
/// concurrent checks never read each other's values.
pub(crate) fn kv_check() -> KvHealth {
    on_store(|store, suffix, now| kv_round_trip(store, STORE, suffix, now))
}

/// The readiness probe's check: a read while a round trip within
/// `kg_http::health::KV_WRITE_PROOF_MS` vouches for writes, else a round trip.
pub(crate) fn kv_check_reading() -> KvHealth {
    on_store(|store, suffix, now| kv_check_reading_on(store, STORE, suffix, now, KV_WRITE_PROOF_MS))
}

/// Opens the store and runs `check` on it with this check's unique suffix and the time; a
/// store that does not open is the failure.
fn on_store(check: impl FnOnce(&SpinKv, &str, u64) -> KvHealth) -> KvHealth {
    match SpinKv::open() {
        Ok(store) => check(&store, &kg_spin::clock::unique_suffix(), now_unix_ms()),
        Err(e) => KvHealth::Failed {
            store: STORE.into(),
            reason: e,
        },
    }
}

pub(crate) fn now_unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
