//! The Spin key-value store (`default`), as the agent's memory (`kg_agent_core::memory::Kv`)
//! and the health checks (`kg_http::health::KvStore`) see it.

use kg_agent_core::memory::Kv;
use kg_http::health::KvStore;
use spin_sdk::key_value::Store;
use spin_sdk::wit::wasi::keyvalue as wasi_kv;

pub const STORE: &str = "default";

pub struct SpinKv(Store);

impl SpinKv {
    pub fn open() -> Result<SpinKv, String> {
        Store::open(STORE)
            .map(SpinKv)
            .map_err(|e| format!("key-value store `{STORE}`: {e}"))
    }
}

/// The same store through `wasi:keyvalue` (Spin 3+, devhost), for what Spin's own API
/// lacks: atomic increments and batches.
pub fn wasi_bucket() -> Result<wasi_kv::store::Bucket, String> {
    wasi_kv::store::open(STORE).map_err(|e| format!("key-value store: {e:?}"))
}

impl Kv for SpinKv {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, String> {
        self.0.get(key).map_err(|e| e.to_string())
    }
    fn set(&self, key: &str, value: &[u8]) -> Result<(), String> {
        self.0.set(key, value).map_err(|e| e.to_string())
    }
    fn delete(&self, key: &str) -> Result<(), String> {
        self.0.delete(key).map_err(|e| e.to_string())
    }
    fn keys(&self) -> Result<Vec<String>, String> {
        self.0.get_keys().map_err(|e| e.to_string())
    }
    /// `wasi:keyvalue/atomics` increment: one step on every instance sharing the store.
    fn increment(&self, key: &str, delta: i64) -> Result<i64, String> {
        wasi_kv::atomics::increment(&wasi_bucket()?, key, delta).map_err(|e| format!("{e:?}"))
    }
    /// One `wasi:keyvalue/batch` set-many (Spin 3+: one SQLite transaction, so one commit
    /// and its fsyncs for all of them; a Redis MSET), else one `set` each.
    fn set_many(&self, entries: &[(String, Vec<u8>)]) -> Result<(), String> {
        match wasi_bucket() {
            Ok(bucket) => wasi_kv::batch::set_many(&bucket, entries).map_err(|e| format!("{e:?}")),
            Err(e) => {
                eprintln!("dispatcher: no wasi:keyvalue bucket ({e}): one write per key");
                entries.iter().try_for_each(|(k, v)| Kv::set(self, k, v))
            }
        }
    }
}

impl KvStore for SpinKv {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, String> {
        Kv::get(self, key)
    }
    fn set(&self, key: &str, value: &[u8]) -> Result<(), String> {
        Kv::set(self, key, value)
    }
    fn delete(&self, key: &str) -> Result<(), String> {
        Kv::delete(self, key)
    }
}
