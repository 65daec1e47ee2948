//! `GET /health`: asks every dependency component for its status over WIT and round-trips
//! the key-value store.

use kg_http::health::{KV_PROBE_KEY, KvHealth, KvProbe, report};
use kg_wit::kg::{
    action_executor::action_executor, query_tools::query_tools, retriever::retriever,
    router::router, summariser::summariser,
};
use spin_sdk::http::Response;
use spin_sdk::key_value::Store;

const STORE: &str = "default";

pub fn handle() -> Response {
    let components = [
        router::status(),
        query_tools::status(),
        action_executor::status(),
        retriever::status(),
        summariser::status(),
    ];
    let kv = kv_round_trip();
    let (status, body) = report(env!("CARGO_PKG_VERSION"), &components, &kv);
    crate::json_response(status, &body)
}

/// Reads the previous probe, writes the next one and reads it back.
fn kv_round_trip() -> KvHealth {
    let failed = |reason: String| KvHealth::Failed {
        store: STORE.into(),
        reason,
    };
    let store = match Store::open(STORE) {
        Ok(store) => store,
        Err(e) => return failed(format!("open: {e}")),
    };
    let previous = match store.get(KV_PROBE_KEY) {
        Ok(previous) => previous,
        Err(e) => return failed(format!("get: {e}")),
    };
    let (probe, previous) = KvProbe::next(previous.as_deref(), now_unix_ms());
    let bytes = probe.to_bytes();
    if let Err(e) = store.set(KV_PROBE_KEY, &bytes) {
        return failed(format!("set: {e}"));
    }
    match store.get(KV_PROBE_KEY) {
        Ok(Some(read)) if read == bytes => KvHealth::Ok {
            store: STORE.into(),
            probe,
            previous,
        },
        Ok(_) => failed("read back a different value than written".into()),
        Err(e) => failed(format!("get after set: {e}")),
    }
}

fn now_unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
