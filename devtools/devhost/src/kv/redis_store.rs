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

    /// `INCRBY`, as Spin's Redis store does (the value is decimal text).
    fn increment(&self, key: &str, delta: i64) -> Result<i64, String> {
        self.with(|c| c.incr(key, delta))
    }

    /// One script, so the comparison and the write are one atomic step on the server.
    fn swap_if(&self, key: &str, expected: Option<&[u8]>, new: &[u8]) -> Result<bool, String> {
        const SCRIPT: &str = "local v = redis.call('GET', KEYS[1]) \
             if (ARGV[1] == '0' and v == false) or (ARGV[1] == '1' and v == ARGV[2]) then \
               redis.call('SET', KEYS[1], ARGV[3]) return 1 end \
             return 0";
        let swapped: i64 = self.with(|c| {
            redis::cmd("EVAL")
                .arg(SCRIPT)
                .arg(1)
                .arg(key)
                .arg(if expected.is_some() { "1" } else { "0" })
                .arg(expected.unwrap_or_default())
                .arg(new)
                .query(c)
        })?;
        Ok(swapped == 1)
    }

    /// `MSET`: atomic on the server.
    fn set_many(&self, pairs: &[(String, Vec<u8>)]) -> Result<(), String> {
        if pairs.is_empty() {
            return Ok(());
        }
        self.with(|c| c.mset(pairs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A redis-server of its own on a free loopback port (Debian's, as the e2e tests use;
    /// REDIS_SERVER_BIN to name another), stopped when dropped.
    struct Server(std::process::Child, String);

    impl Drop for Server {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    fn redis_server() -> Server {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .unwrap();
        let binary = std::env::var("REDIS_SERVER_BIN").unwrap_or_else(|_| "redis-server".into());
        let child = std::process::Command::new(&binary)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {binary} (scripts/setup.sh installs it): {e}"));
        // Owned by the guard at once: a panic below still stops it.
        let server = Server(child, format!("redis://127.0.0.1:{port}"));
        for _ in 0..200 {
            if RedisStore::connect(&server.1).is_ok() {
                return server;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        panic!("{binary} did not answer on {}", server.1);
    }

    #[test]
    fn counters_swaps_and_batches_are_atomic_on_the_server() {
        let server = redis_server();
        let (a, b) = (
            RedisStore::connect(&server.1).unwrap(),
            RedisStore::connect(&server.1).unwrap(),
        );
        std::thread::scope(|scope| {
            for store in [&a, &b, &a, &b] {
                scope.spawn(move || {
                    for _ in 0..100 {
                        store.increment("n", 1).unwrap();
                    }
                });
            }
        });
        assert_eq!(a.increment("n", 0).unwrap(), 400);
        // Spin's Redis store keeps a counter as decimal text (INCRBY).
        assert_eq!(b.get("n").unwrap(), Some(b"400".to_vec()));
        assert!(a.swap_if("owner", None, b"ann").unwrap());
        assert!(!b.swap_if("owner", None, b"bob").unwrap());
        assert!(!b.swap_if("owner", Some(b"bob"), b"eve").unwrap());
        assert!(b.swap_if("owner", Some(b"ann"), b"bob").unwrap());
        assert_eq!(a.get("owner").unwrap(), Some(b"bob".to_vec()));
        a.set_many(&[("x".into(), b"1".to_vec()), ("y".into(), b"2".to_vec())])
            .unwrap();
        assert_eq!(b.get("y").unwrap(), Some(b"2".to_vec()));
    }

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
