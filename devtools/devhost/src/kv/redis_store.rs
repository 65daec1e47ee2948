//! Spin's `redis` key-value store type: plain `GET`/`SET`/`DEL`/`EXISTS`/`KEYS *` on one
//! Redis (or Valkey) database, the same commands Spin sends, so devhost and `spin up`
//! instances pointed at one Redis share their state.

use super::Store;
use anyhow::{Context, Result};
use redis::Commands;
use std::sync::Mutex;
use std::time::Duration;

/// A small pool: requests take a connection, use it, and give it back. A connection that
/// failed is dropped instead of returned, and the next call opens a fresh one.
pub struct RedisStore {
    client: redis::Client,
    idle: Mutex<Vec<redis::Connection>>,
}

/// Bounded so a frozen Redis fails a request instead of hanging it.
const TIMEOUT: Duration = Duration::from_secs(5);
const MAX_IDLE: usize = 32;

impl RedisStore {
    /// Opens one connection and pings, so an unreachable Redis is reported at start-up.
    pub fn connect(url: &str) -> Result<RedisStore> {
        let client = redis::Client::open(url).with_context(|| format!("invalid url `{url}`"))?;
        let store = RedisStore {
            client,
            idle: Mutex::new(Vec::new()),
        };
        let mut connection = store
            .open()
            .with_context(|| format!("cannot connect to {}", redacted(url)))?;
        redis::cmd("PING")
            .query::<String>(&mut connection)
            .with_context(|| format!("{} does not answer PING", redacted(url)))?;
        store.give_back(connection);
        Ok(store)
    }

    fn open(&self) -> redis::RedisResult<redis::Connection> {
        let connection = self.client.get_connection_with_timeout(TIMEOUT)?;
        connection.set_read_timeout(Some(TIMEOUT))?;
        connection.set_write_timeout(Some(TIMEOUT))?;
        Ok(connection)
    }

    fn give_back(&self, connection: redis::Connection) {
        if let Ok(mut idle) = self.idle.lock()
            && idle.len() < MAX_IDLE
        {
            idle.push(connection);
        }
    }

    fn with<T>(
        &self,
        f: impl FnOnce(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> Result<T, String> {
        let pooled = self.idle.lock().ok().and_then(|mut idle| idle.pop());
        let mut connection = match pooled {
            Some(connection) => connection,
            None => self.open().map_err(|e| format!("redis: {e}"))?,
        };
        match f(&mut connection) {
            Ok(value) => {
                self.give_back(connection);
                Ok(value)
            }
            Err(e) => Err(format!("redis: {e}")),
        }
    }
}

/// The URL without its password, for messages.
fn redacted(url: &str) -> String {
    match url.split_once('@') {
        Some((credentials, rest)) => {
            let scheme = credentials.split("://").next().unwrap_or("redis");
            format!("{scheme}://***@{rest}")
        }
        None => url.to_string(),
    }
}

impl Store for RedisStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, String> {
        self.with(|c| c.get(key))
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<(), String> {
        self.with(|c| c.set(key, value))
    }

    fn delete(&self, key: &str) -> Result<(), String> {
        self.with(|c| c.del(key))
    }

    fn exists(&self, key: &str) -> Result<bool, String> {
        self.with(|c| c.exists(key))
    }

    fn keys(&self) -> Result<Vec<String>, String> {
        self.with(|c| c.keys("*"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_reach_messages() {
        assert_eq!(
            redacted("redis://user:secret@cache:6379/0"),
            "redis://***@cache:6379/0"
        );
        assert_eq!(redacted("redis://cache:6379"), "redis://cache:6379");
    }

    #[test]
    fn an_unreachable_redis_fails_at_connect_with_the_address() {
        // Port 9 (discard) on loopback: nothing listens, refused at once.
        let error = RedisStore::connect("redis://127.0.0.1:9")
            .err()
            .map(|e| format!("{e:#}"))
            .unwrap_or_default();
        assert!(
            error.contains("cannot connect to redis://127.0.0.1:9"),
            "{error}"
        );
    }
}
