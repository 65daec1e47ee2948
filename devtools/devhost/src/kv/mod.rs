//! Spin's key-value stores (`fermyon:spin/key-value@2.0.0`), by label, on the backends the
//! runtime configuration names: Spin's local SQLite file or Redis/Valkey (shared by every
//! instance pointed at it, like Spin's `redis` store).

mod redis_store;
mod sqlite;

use crate::config::runtime_config::{RuntimeConfig, StoreConfig};
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

pub use redis_store::RedisStore;
pub use sqlite::SqliteDatabase;

/// One store's operations. Errors are the host's message for `error::other`.
pub trait Store: Send + Sync {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, String>;
    fn set(&self, key: &str, value: &[u8]) -> Result<(), String>;
    fn delete(&self, key: &str) -> Result<(), String>;
    fn exists(&self, key: &str) -> Result<bool, String>;
    fn keys(&self) -> Result<Vec<String>, String>;
    /// Adds `delta` to the counter under `key` (absent: 0) in one atomic step for every
    /// instance sharing the store, and answers the new value (wasi:keyvalue `increment`).
    /// The counter is stored as the backend's Spin store keeps it (SQLite: 8 bytes little
    /// endian; Redis: decimal text), so Spin and devhost on one store count together.
    fn increment(&self, key: &str, delta: i64) -> Result<i64, String>;
    /// Writes `new` under `key` only if it still holds `expected` (`None`: absent), in one
    /// atomic step; `Ok(false)` when it does not (wasi:keyvalue `swap`).
    fn swap_if(&self, key: &str, expected: Option<&[u8]>, new: &[u8]) -> Result<bool, String>;
    /// Every pair, in one transaction where the backend has them (wasi:keyvalue `set-many`).
    fn set_many(&self, pairs: &[(String, Vec<u8>)]) -> Result<(), String> {
        pairs
            .iter()
            .try_for_each(|(key, value)| self.set(key, value))
    }
}

/// The stores of the application, opened at start-up so a misconfigured or unreachable
/// backend fails there, naming its runtime-config entry, not on the first request.
#[derive(Clone, Default)]
pub struct KeyValueStores {
    stores: BTreeMap<String, Arc<dyn Store>>,
}

impl KeyValueStores {
    /// The runtime configuration's stores, plus `default` on the SQLite file `default_path`
    /// when the configuration does not name one (Spin's behaviour without a file).
    pub fn open(config: &RuntimeConfig, default_path: &Path) -> Result<KeyValueStores> {
        let mut stores: BTreeMap<String, Arc<dyn Store>> = BTreeMap::new();
        let mut files: BTreeMap<std::path::PathBuf, SqliteDatabase> = BTreeMap::new();
        let mut sqlite = |path: &Path| -> Result<SqliteDatabase> {
            if let Some(db) = files.get(path) {
                return Ok(db.clone());
            }
            let db = SqliteDatabase::open(path)?;
            files.insert(path.to_path_buf(), db.clone());
            Ok(db)
        };
        for (label, store) in &config.key_value_stores {
            let opened: Arc<dyn Store> = match store {
                StoreConfig::Sqlite { path } => Arc::new(sqlite(path)?.store(label)),
                StoreConfig::Redis { url } => {
                    Arc::new(RedisStore::connect(url).with_context(|| {
                        format!("runtime config [key_value_store.{label}] (type \"redis\")")
                    })?)
                }
            };
            stores.insert(label.clone(), opened);
        }
        if !stores.contains_key("default") {
            stores.insert(
                "default".to_string(),
                Arc::new(sqlite(default_path)?.store("default")),
            );
        }
        Ok(KeyValueStores { stores })
    }

    pub fn get(&self, label: &str) -> Option<Arc<dyn Store>> {
        self.stores.get(label).cloned()
    }
}
