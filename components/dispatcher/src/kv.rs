//! The Spin key-value store (`default`), as the agent's memory (`kg_agent_core::memory::Kv`)
//! and the health checks (`kg_http::health::KvStore`) see it.

use kg_agent_core::memory::Kv;
use kg_http::health::KvStore;
use spin_sdk::key_value::Store;

pub const STORE: &str = "default";

pub struct SpinKv(Store);

impl SpinKv {
    pub fn open() -> Result<SpinKv, String> {
        Store::open(STORE)
            .map(SpinKv)
            .map_err(|e| format!("key-value store `{STORE}`: {e}"))
    }
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
