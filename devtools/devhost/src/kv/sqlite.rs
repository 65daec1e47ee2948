//! Spin's local key-value store (runtime-config type `spin`): one SQLite file, so state
//! survives requests and devhost restarts. One file may hold several stores (by label).

use super::Store;
use anyhow::{Context, Result};
use rusqlite::{Connection, OptionalExtension, params};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

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

    fn lock(&self) -> Result<MutexGuard<'_, Connection>, String> {
        self.connection
            .lock()
            .map_err(|_| "key-value database lock poisoned".to_string())
    }

    fn with<T>(&self, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T, String> {
        f(&*self.lock()?).map_err(|e| e.to_string())
    }

    fn read(c: &Connection, store: &str, key: &str) -> rusqlite::Result<Option<Vec<u8>>> {
        c.prepare_cached("SELECT value FROM key_value WHERE store = ?1 AND key = ?2")?
            .query_row(params![store, key], |row| row.get(0))
            .optional()
    }

    fn write(c: &Connection, store: &str, key: &str, value: &[u8]) -> rusqlite::Result<()> {
        c.prepare_cached(
            "INSERT INTO key_value (store, key, value) VALUES (?1, ?2, ?3)
             ON CONFLICT (store, key) DO UPDATE SET value = excluded.value",
        )?
        .execute(params![store, key, value])
        .map(drop)
    }

    pub fn get(&self, store: &str, key: &str) -> Result<Option<Vec<u8>>, String> {
        self.with(|c| Self::read(c, store, key))
    }

    pub fn set(&self, store: &str, key: &str, value: &[u8]) -> Result<(), String> {
        self.with(|c| Self::write(c, store, key, value))
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

    /// `work` inside `BEGIN IMMEDIATE` … `COMMIT` (rolled back on `Err`): the write lock is
    /// taken before the first read, so a read-modify-write is atomic across processes on
    /// the file too (another one waits, up to rusqlite's 5 s busy timeout).
    fn immediate<T>(
        &self,
        work: impl FnOnce(&Connection) -> Result<T, String>,
    ) -> Result<T, String> {
        let connection = self.lock()?;
        connection
            .execute_batch("BEGIN IMMEDIATE")
            .map_err(|e| e.to_string())?;
        match work(&connection) {
            Ok(value) => {
                connection
                    .execute_batch("COMMIT")
                    .map_err(|e| e.to_string())?;
                Ok(value)
            }
            Err(e) => {
                let _ = connection.execute_batch("ROLLBACK");
                Err(e)
            }
        }
    }

    /// A counter as Spin's SQLite store keeps it: 8 bytes, little endian.
    pub fn increment(&self, store: &str, key: &str, delta: i64) -> Result<i64, String> {
        self.immediate(|c| {
            let current = match Self::read(c, store, key).map_err(|e| e.to_string())? {
                None => 0,
                Some(bytes) => <[u8; 8]>::try_from(bytes.as_slice())
                    .map(i64::from_le_bytes)
                    .map_err(|_| format!("`{key}` does not hold a counter"))?,
            };
            let next = current
                .checked_add(delta)
                .ok_or_else(|| format!("`{key}` would overflow"))?;
            Self::write(c, store, key, &next.to_le_bytes()).map_err(|e| e.to_string())?;
            Ok(next)
        })
    }

    pub fn swap_if(
        &self,
        store: &str,
        key: &str,
        expected: Option<&[u8]>,
        new: &[u8],
    ) -> Result<bool, String> {
        self.immediate(|c| {
            if Self::read(c, store, key)
                .map_err(|e| e.to_string())?
                .as_deref()
                != expected
            {
                return Ok(false);
            }
            Self::write(c, store, key, new).map_err(|e| e.to_string())?;
            Ok(true)
        })
    }

    pub fn set_many(&self, store: &str, pairs: &[(String, Vec<u8>)]) -> Result<(), String> {
        self.immediate(|c| {
            pairs
                .iter()
                .try_for_each(|(key, value)| Self::write(c, store, key, value))
                .map_err(|e| e.to_string())
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

    fn increment(&self, key: &str, delta: i64) -> Result<i64, String> {
        self.database.increment(&self.label, key, delta)
    }

    fn swap_if(&self, key: &str, expected: Option<&[u8]>, new: &[u8]) -> Result<bool, String> {
        self.database.swap_if(&self.label, key, expected, new)
    }

    fn set_many(&self, pairs: &[(String, Vec<u8>)]) -> Result<(), String> {
        self.database.set_many(&self.label, pairs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_swaps_and_batches_are_atomic_across_connections() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kv.sqlite");
        // Two connections on one file, as two processes would have: 4 x 250 increments.
        let (a, b) = (
            SqliteDatabase::open(&path).unwrap(),
            SqliteDatabase::open(&path).unwrap(),
        );
        std::thread::scope(|scope| {
            for db in [&a, &b, &a, &b] {
                scope.spawn(move || {
                    for _ in 0..250 {
                        db.increment("default", "n", 1).unwrap();
                    }
                });
            }
        });
        assert_eq!(a.increment("default", "n", 0).unwrap(), 1_000);
        assert_eq!(
            a.get("default", "n").unwrap(),
            Some(1_000i64.to_le_bytes().to_vec())
        );
        a.set("default", "text", b"x").unwrap();
        assert!(
            a.increment("default", "text", 1)
                .unwrap_err()
                .contains("counter")
        );
        // A swap wins only against what it expected.
        assert!(a.swap_if("default", "owner", None, b"ann").unwrap());
        assert!(!b.swap_if("default", "owner", None, b"bob").unwrap());
        assert!(!b.swap_if("default", "owner", Some(b"bob"), b"eve").unwrap());
        assert!(b.swap_if("default", "owner", Some(b"ann"), b"bob").unwrap());
        assert_eq!(a.get("default", "owner").unwrap(), Some(b"bob".to_vec()));
        a.set_many(
            "default",
            &[("x".into(), b"1".to_vec()), ("y".into(), b"2".to_vec())],
        )
        .unwrap();
        assert_eq!(b.get("default", "y").unwrap(), Some(b"2".to_vec()));
    }

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
