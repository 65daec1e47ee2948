//! Spin's local key-value store (runtime-config type `spin`): one SQLite file, so state
//! survives requests and devhost restarts. One file may hold several stores (by label).

use super::Store;
use anyhow::{Context, Result};
use rusqlite::{Connection, OptionalExtension, params};
use std::path::Path;
use std::sync::{Arc, Mutex};

/// The SQLite file shared by every request. Calls are short, so one mutex is enough.
#[derive(Clone)]
pub struct SqliteDatabase {
    connection: Arc<Mutex<Connection>>,
}

impl SqliteDatabase {
    pub fn open(path: &Path) -> Result<Self> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let connection = Connection::open(path)
            .with_context(|| format!("opening key-value database {}", path.display()))?;
        // WAL with `synchronous = NORMAL`: a commit is an append to the log, synced at
        // checkpoints, not an fsync per write (that cost 7 ms per write here, more than the
        // whole request it was part of). A devhost crash loses nothing; a power cut can lose
        // the last writes, never corrupt the file: fine for development state.
        connection.execute_batch(
            "PRAGMA journal_mode = WAL;
             PRAGMA synchronous = NORMAL;
             CREATE TABLE IF NOT EXISTS key_value (
                 store TEXT NOT NULL,
                 key TEXT NOT NULL,
                 value BLOB NOT NULL,
                 PRIMARY KEY (store, key)
             );",
        )?;
        Ok(SqliteDatabase {
            connection: Arc::new(Mutex::new(connection)),
        })
    }

    fn with<T>(&self, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T, String> {
        let connection = self
            .connection
            .lock()
            .map_err(|_| "key-value database lock poisoned".to_string())?;
        f(&connection).map_err(|e| e.to_string())
    }

    pub fn get(&self, store: &str, key: &str) -> Result<Option<Vec<u8>>, String> {
        self.with(|c| {
            c.prepare_cached("SELECT value FROM key_value WHERE store = ?1 AND key = ?2")?
                .query_row(params![store, key], |row| row.get(0))
                .optional()
        })
    }

    pub fn set(&self, store: &str, key: &str, value: &[u8]) -> Result<(), String> {
        self.with(|c| {
            c.prepare_cached(
                "INSERT INTO key_value (store, key, value) VALUES (?1, ?2, ?3)
                 ON CONFLICT (store, key) DO UPDATE SET value = excluded.value",
            )?
            .execute(params![store, key, value])
            .map(drop)
        })
    }

    pub fn delete(&self, store: &str, key: &str) -> Result<(), String> {
        self.with(|c| {
            c.execute(
                "DELETE FROM key_value WHERE store = ?1 AND key = ?2",
                params![store, key],
            )
            .map(drop)
        })
    }

    pub fn exists(&self, store: &str, key: &str) -> Result<bool, String> {
        self.get(store, key).map(|v| v.is_some())
    }

    /// One store (label) of this file.
    pub fn store(&self, label: &str) -> SqliteStore {
        SqliteStore {
            database: self.clone(),
            label: label.to_string(),
        }
    }

    pub fn keys(&self, store: &str) -> Result<Vec<String>, String> {
        self.with(|c| {
            let mut statement =
                c.prepare("SELECT key FROM key_value WHERE store = ?1 ORDER BY key")?;
            let rows = statement.query_map(params![store], |row| row.get(0))?;
            rows.collect()
        })
    }
}

/// A store of a SQLite file, as the host sees it.
pub struct SqliteStore {
    database: SqliteDatabase,
    label: String,
}

impl Store for SqliteStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, String> {
        self.database.get(&self.label, key)
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<(), String> {
        self.database.set(&self.label, key, value)
    }

    fn delete(&self, key: &str) -> Result<(), String> {
        self.database.delete(&self.label, key)
    }

    fn exists(&self, key: &str) -> Result<bool, String> {
        self.database.exists(&self.label, key)
    }

    fn keys(&self) -> Result<Vec<String>, String> {
        self.database.keys(&self.label)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_persist_across_reopen_and_stores_are_separate() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kv/db.sqlite");
        {
            let db = SqliteDatabase::open(&path).unwrap();
            db.set("default", "a", b"1").unwrap();
            db.set("default", "a", b"2").unwrap();
            db.set("other", "a", b"x").unwrap();
        }
        let db = SqliteDatabase::open(&path).unwrap();
        assert_eq!(db.get("default", "a").unwrap(), Some(b"2".to_vec()));
        assert_eq!(db.get("other", "a").unwrap(), Some(b"x".to_vec()));
        assert_eq!(db.keys("default").unwrap(), vec!["a".to_string()]);
        db.delete("default", "a").unwrap();
        assert!(!db.exists("default", "a").unwrap());
        assert_eq!(db.get("missing", "a").unwrap(), None);
    }
}
