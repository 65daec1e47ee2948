//! The Spin key-value store as the agent's memory sees it.

use kg_agent_core::memory::Kv;
use spin_sdk::key_value::Store;

pub struct SpinKv(Store);

impl SpinKv {
    pub fn open() -> Result<SpinKv, String> {
        Store::open_default()
            .map(SpinKv)
            .map_err(|e| format!("key-value store `default`: {e}"))
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
