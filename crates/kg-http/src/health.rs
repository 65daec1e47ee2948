//! `/health`: the dispatcher's version, every dependency component's status (reached over
//! its WIT interface) and a key-value store round trip.

use kg_wit::types::ComponentStatus;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Key of the record of the latest probe (how many so far, when). Informational only:
/// concurrent checks may overwrite each other's record, and nothing is compared with it.
pub const KV_PROBE_KEY: &str = "health:probe";

/// Prefix of each check's own round-trip key, `health:check:<unique suffix>`: written, read
/// back and deleted by that one check, so concurrent checks (on one instance or many
/// sharing a store) never read each other's values.
pub const KV_CHECK_PREFIX: &str = "health:check:";

/// The round-trip key of one check.
pub fn kv_check_key(unique_suffix: &str) -> String {
    format!("{KV_CHECK_PREFIX}{unique_suffix}")
}

/// The key-value operations the health check needs (Spin's store in the dispatcher, a
/// map in tests). Errors are the store's own words.
pub trait KvStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, String>;
    fn set(&self, key: &str, value: &[u8]) -> Result<(), String>;
    fn delete(&self, key: &str) -> Result<(), String>;
}

/// One check of the store: reads the latest probe record, writes this check's record
/// under its own key (`kv_check_key(unique_suffix)`), reads it back, deletes it, then
/// records it as the latest probe. A failure names the operation that failed.
pub fn kv_round_trip(
    store: &impl KvStore,
    name: &str,
    unique_suffix: &str,
    now_unix_ms: u64,
) -> KvHealth {
    let failed = |reason: String| KvHealth::Failed {
        store: name.into(),
        reason,
    };
    let previous = match store.get(KV_PROBE_KEY) {
        Ok(previous) => previous,
        Err(e) => return failed(format!("get: {e}")),
    };
    let (probe, previous) = KvProbe::next(previous.as_deref(), now_unix_ms);
    let bytes = probe.to_bytes();
    let key = kv_check_key(unique_suffix);
    if let Err(e) = store.set(&key, &bytes) {
        return failed(format!("set: {e}"));
    }
    let read = store.get(&key);
    // Deleted whatever the read gave, so a failed check leaves nothing behind either.
    let deleted = store.delete(&key);
    match read {
        Ok(Some(read)) if read == bytes => {}
        Ok(_) => return failed("read back a different value than written".into()),
        Err(e) => return failed(format!("get after set: {e}")),
    }
    if let Err(e) = deleted {
        return failed(format!("delete: {e}"));
    }
    if let Err(e) = store.set(KV_PROBE_KEY, &bytes) {
        return failed(format!("set: {e}"));
    }
    KvHealth::Ok {
        store: name.into(),
        probe,
        previous,
    }
}

/// How long a successful round trip vouches for the store's writes to the readiness probe
/// ([`kv_check_reading`]). An orchestrator probes every few seconds; each round trip is
/// three writes, on Spin's default SQLite store about 3 ms each (`cargo bench --bench
/// hosts`). A store that stops taking writes is found within this much.
pub const KV_WRITE_PROOF_MS: u64 = 30_000;

/// The readiness probe's check: one read of the latest probe record when a round trip
/// succeeded within `proof_ms` of `now_unix_ms` (the read proves the store answers; the
/// record's age vouches for writes), else a full [`kv_round_trip`] (which then renews the
/// record). A failed read fails the check as the round trip's would.
pub fn kv_check_reading(
    store: &impl KvStore,
    name: &str,
    unique_suffix: &str,
    now_unix_ms: u64,
    proof_ms: u64,
) -> KvHealth {
    match store.get(KV_PROBE_KEY) {
        Ok(Some(bytes)) => {
            if let Ok(probe) = serde_json::from_slice::<KvProbe>(&bytes)
                && probe.at_unix_ms <= now_unix_ms
                && now_unix_ms - probe.at_unix_ms < proof_ms
            {
                return KvHealth::Ok {
                    store: name.into(),
                    probe,
                    previous: None,
                };
            }
        }
        Ok(None) => {}
        Err(e) => {
            return KvHealth::Failed {
                store: name.into(),
                reason: format!("get: {e}"),
            };
        }
    }
    kv_round_trip(store, name, unique_suffix, now_unix_ms)
}

/// What the health check writes to the KV store on every call: how many probes so far and
/// when the last one ran. Reading back the previous record proves the store persists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct KvProbe {
    pub count: u64,
    pub at_unix_ms: u64,
}

impl KvProbe {
    /// The record to write now, given the bytes stored by the previous probe (if any).
    /// Unreadable earlier bytes restart the count rather than failing the health check.
    pub fn next(previous: Option<&[u8]>, now_unix_ms: u64) -> (KvProbe, Option<KvProbe>) {
        let previous = previous.and_then(|b| serde_json::from_slice::<KvProbe>(b).ok());
        let count = previous.map_or(0, |p| p.count).saturating_add(1);
        (
            KvProbe {
                count,
                at_unix_ms: now_unix_ms,
            },
            previous,
        )
    }

    pub fn to_bytes(self) -> Vec<u8> {
        json!({"count": self.count, "at_unix_ms": self.at_unix_ms})
            .to_string()
            .into_bytes()
    }
}

/// Outcome of the KV round trip.
#[derive(Debug, Clone, PartialEq)]
pub enum KvHealth {
    Ok {
        store: String,
        probe: KvProbe,
        previous: Option<KvProbe>,
    },
    Failed {
        store: String,
        reason: String,
    },
}

/// Builds the `/health` body and status: 200 when every component is ready and the store
/// answers, 503 otherwise.
pub fn report(version: &str, components: &[ComponentStatus], kv: &KvHealth) -> (u16, Value) {
    let components_json: Vec<Value> = components.iter().map(component_json).collect();
    let kv_json = match kv {
        KvHealth::Ok {
            store,
            probe,
            previous,
        } => json!({
            "ok": true,
            "store": store,
            "probes": probe.count,
            "previous_probe_at_unix_ms": previous.map(|p| p.at_unix_ms),
        }),
        KvHealth::Failed { store, reason } => {
            json!({"ok": false, "store": store, "detail": reason})
        }
    };
    let kv_ok = matches!(kv, KvHealth::Ok { .. });
    let healthy = kv_ok && components.iter().all(|c| c.ready);
    let status = if healthy { 200 } else { 503 };
    let mut problems: Vec<String> = components
        .iter()
        .filter(|c| !c.ready)
        .map(|c| {
            let failed: Vec<&str> = c
                .checks
                .iter()
                .filter(|k| !k.ok)
                .map(|k| k.detail.as_str())
                .collect();
            format!("{} not ready: {}", c.name, failed.join("; "))
        })
        .collect();
    if let KvHealth::Failed { reason, .. } = kv {
        problems.push(format!("key-value store: {reason}"));
    }
    let body = json!({
        "status": if healthy { "ok" } else { "degraded" },
        "version": version,
        "components": components_json,
        "kv": kv_json,
        "problems": problems,
    });
    (status, body)
}

/// The action catalog's version as the action-executor reports it: the word after
/// `version ` in its `catalog` check (the executor is the one that loads the catalog, so
/// its word is the one that counts). `None` when the executor could not load it.
pub fn catalog_version(components: &[ComponentStatus]) -> Option<String> {
    let check = components
        .iter()
        .filter(|c| c.name == "action-executor")
        .flat_map(|c| &c.checks)
        .find(|k| k.name == "catalog" && k.ok)?;
    let (_, after) = check.detail.rsplit_once("version ")?;
    after.split_whitespace().next().map(str::to_string)
}

fn component_json(c: &ComponentStatus) -> Value {
    json!({
        "name": c.name,
        "version": c.version,
        "ready": c.ready,
        "checks": c.checks.iter().map(|k| json!({"name": k.name, "ok": k.ok, "detail": k.detail})).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use kg_wit::types::Check;

    fn status(name: &str, ready: bool) -> ComponentStatus {
        ComponentStatus {
            name: name.into(),
            version: "0.1.0".into(),
            ready,
            checks: vec![Check {
                name: "self".into(),
                ok: ready,
                detail: if ready {
                    "ok".into()
                } else {
                    "graph unreachable".into()
                },
            }],
        }
    }

    fn kv_ok() -> KvHealth {
        KvHealth::Ok {
            store: "default".into(),
            probe: KvProbe {
                count: 2,
                at_unix_ms: 20,
            },
            previous: Some(KvProbe {
                count: 1,
                at_unix_ms: 10,
            }),
        }
    }

    #[test]
    fn probe_counts_up_from_the_previous_record() {
        let (first, prev) = KvProbe::next(None, 5);
        assert_eq!((first.count, prev), (1, None));
        let (second, prev) = KvProbe::next(Some(&first.to_bytes()), 9);
        assert_eq!(
            second,
            KvProbe {
                count: 2,
                at_unix_ms: 9
            }
        );
        assert_eq!(prev, Some(first));
        let (restart, prev) = KvProbe::next(Some(b"garbage"), 1);
        assert_eq!((restart.count, prev), (1, None));
    }

    /// A map behind a lock, with an optional fault.
    #[derive(Default)]
    struct MapStore {
        map: std::sync::Mutex<std::collections::HashMap<String, Vec<u8>>>,
        /// Every `get` of a check key answers these bytes instead (a store that loses writes).
        corrupt: Option<Vec<u8>>,
        fail_delete: bool,
    }

    impl KvStore for MapStore {
        fn get(&self, key: &str) -> Result<Option<Vec<u8>>, String> {
            if let Some(bytes) = &self.corrupt
                && key.starts_with(KV_CHECK_PREFIX)
            {
                return Ok(Some(bytes.clone()));
            }
            Ok(self.map.lock().unwrap().get(key).cloned())
        }
        fn set(&self, key: &str, value: &[u8]) -> Result<(), String> {
            self.map
                .lock()
                .unwrap()
                .insert(key.to_string(), value.to_vec());
            Ok(())
        }
        fn delete(&self, key: &str) -> Result<(), String> {
            if self.fail_delete {
                return Err("access denied".into());
            }
            self.map.lock().unwrap().remove(key);
            Ok(())
        }
    }

    #[test]
    fn a_round_trip_counts_probes_and_leaves_only_the_latest_record() {
        let store = MapStore::default();
        let first = kv_round_trip(&store, "default", "a", 10);
        let second = kv_round_trip(&store, "default", "b", 20);
        assert!(matches!(first, KvHealth::Ok { probe, previous: None, .. } if probe.count == 1));
        assert!(
            matches!(second, KvHealth::Ok { probe, previous: Some(p), .. } if probe.count == 2 && p.at_unix_ms == 10)
        );
        let keys: Vec<String> = store.map.lock().unwrap().keys().cloned().collect();
        assert_eq!(keys, vec![KV_PROBE_KEY.to_string()]);
    }

    #[test]
    fn a_lost_write_or_a_failed_delete_is_a_failure_naming_it() {
        let store = MapStore {
            corrupt: Some(b"other".to_vec()),
            ..MapStore::default()
        };
        let KvHealth::Failed { reason, .. } = kv_round_trip(&store, "default", "a", 1) else {
            panic!("a store answering other bytes is healthy");
        };
        assert_eq!(reason, "read back a different value than written");
        let store = MapStore {
            fail_delete: true,
            ..MapStore::default()
        };
        let KvHealth::Failed { reason, .. } = kv_round_trip(&store, "default", "a", 1) else {
            panic!("a store that cannot delete is healthy");
        };
        assert_eq!(reason, "delete: access denied");
    }

    /// 200 checks at once on one store, interleaved at every operation: each reads back
    /// its own key, so none fails (with one shared key, a check could read another's).
    #[test]
    fn concurrent_checks_never_fail_each_other() {
        let store = MapStore::default();
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..200u64)
                .map(|i| {
                    let store = &store;
                    scope.spawn(move || kv_round_trip(store, "default", &format!("{i}"), i))
                })
                .collect();
            for handle in handles {
                let health = handle.join().unwrap();
                assert!(matches!(health, KvHealth::Ok { .. }), "{health:?}");
            }
        });
        let keys: Vec<String> = store.map.lock().unwrap().keys().cloned().collect();
        assert_eq!(keys, vec![KV_PROBE_KEY.to_string()]);
    }

    /// A store that counts its writes.
    #[derive(Default)]
    struct CountingStore {
        inner: MapStore,
        writes: std::sync::atomic::AtomicUsize,
        fail_get: bool,
    }

    impl KvStore for CountingStore {
        fn get(&self, key: &str) -> Result<Option<Vec<u8>>, String> {
            if self.fail_get {
                return Err("store unreachable".into());
            }
            self.inner.get(key)
        }
        fn set(&self, key: &str, value: &[u8]) -> Result<(), String> {
            self.writes
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            self.inner.set(key, value)
        }
        fn delete(&self, key: &str) -> Result<(), String> {
            self.writes
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            self.inner.delete(key)
        }
    }

    #[test]
    fn readiness_writes_only_when_the_last_round_trip_is_older_than_the_proof() {
        let store = CountingStore::default();
        let writes = || store.writes.load(std::sync::atomic::Ordering::Relaxed);
        // Nothing recorded yet: a round trip (set, delete, set).
        let first = kv_check_reading(&store, "default", "a", 1_000, 30_000);
        assert!(matches!(first, KvHealth::Ok { probe, .. } if probe.count == 1));
        assert_eq!(writes(), 3);
        // Within the proof: reads only, and reports the record that vouches.
        for now in [1_001, 20_000, 30_999] {
            let again = kv_check_reading(&store, "default", "b", now, 30_000);
            assert!(
                matches!(again, KvHealth::Ok { probe, .. } if probe.at_unix_ms == 1_000),
                "{again:?}"
            );
        }
        assert_eq!(writes(), 3);
        // Past it: a round trip again.
        let later = kv_check_reading(&store, "default", "c", 31_000, 30_000);
        assert!(matches!(later, KvHealth::Ok { probe, .. } if probe.count == 2));
        assert_eq!(writes(), 6);
        // A record from the future (a clock stepped back) proves nothing; 0 always writes.
        kv_check_reading(&store, "default", "d", 500, 30_000);
        assert_eq!(writes(), 9);
        kv_check_reading(&store, "default", "e", 501, 0);
        assert_eq!(writes(), 12);
    }

    #[test]
    fn readiness_fails_on_a_store_that_cannot_be_read() {
        let store = CountingStore {
            fail_get: true,
            ..CountingStore::default()
        };
        let KvHealth::Failed { reason, .. } = kv_check_reading(&store, "default", "a", 1, 30_000)
        else {
            panic!("an unreadable store is ready");
        };
        assert_eq!(reason, "get: store unreachable");
    }

    #[test]
    fn a_corrupt_probe_record_means_a_round_trip() {
        let store = CountingStore::default();
        store.inner.set(KV_PROBE_KEY, b"garbage").unwrap();
        let health = kv_check_reading(&store, "default", "a", 10, 30_000);
        assert!(matches!(health, KvHealth::Ok { probe, .. } if probe.count == 1));
        assert_eq!(store.writes.load(std::sync::atomic::Ordering::Relaxed), 3);
    }

    #[test]
    fn the_catalog_version_is_read_from_the_executors_catalog_check() {
        let mut executor = status("action-executor", true);
        executor.checks.push(Check {
            name: "catalog".into(),
            ok: true,
            detail: "5 actions on 3 entity types, from /catalog/actions.toml, version sha256:0123456789ab".into(),
        });
        assert_eq!(
            catalog_version(&[status("router", true), executor.clone()]).as_deref(),
            Some("sha256:0123456789ab")
        );
        executor.checks[1].ok = false;
        assert_eq!(catalog_version(&[executor]), None);
    }

    #[test]
    fn all_ready_is_200_ok() {
        let (code, body) = report("0.1.0", &[status("router", true)], &kv_ok());
        assert_eq!(code, 200);
        assert_eq!(body["status"], "ok");
        assert_eq!(body["kv"]["probes"], 2);
        assert_eq!(body["kv"]["previous_probe_at_unix_ms"], 10);
        assert_eq!(body["components"][0]["name"], "router");
    }

    #[test]
    fn a_component_not_ready_is_503_with_the_reason() {
        let (code, body) = report(
            "0.1.0",
            &[status("router", true), status("query-tools", false)],
            &kv_ok(),
        );
        assert_eq!(code, 503);
        assert_eq!(body["status"], "degraded");
        assert_eq!(
            body["problems"][0],
            "query-tools not ready: graph unreachable"
        );
    }

    #[test]
    fn kv_failure_is_503() {
        let kv = KvHealth::Failed {
            store: "default".into(),
            reason: "access denied".into(),
        };
        let (code, body) = report("0.1.0", &[status("router", true)], &kv);
        assert_eq!(code, 503);
        assert_eq!(body["kv"]["ok"], false);
    }
}
