//! Bookmarks (causal consistency), as Neo4j's Query API hands them out and takes them.
//!
//! Every successful auto-commit answer and every commit carries `bookmarks: [one]`; a write
//! that changed something (data or schema) gets a new bookmark, one number higher than the
//! last, a read or a write that changed nothing the latest one. A request may send
//! `bookmarks: [...]` (auto-commit and begin): each must be one this server issued — else
//! `Neo.ClientError.Transaction.InvalidBookmark` — and devgraph waits until it has committed
//! that far; a bookmark from the future (not issued yet) is waited for up to the bookmark
//! timeout, then `Neo.TransientError.Transaction.BookmarkTimeout`, as a cluster member
//! that never catches up answers.
//!
//! A bookmark is `FB:` + base64 of `dg`, this process's epoch (8 bytes) and the commit
//! number (8 bytes). Bookmarks of another epoch (a devgraph started earlier, say one a
//! test killed) name another database's state: they are taken and ignored, as Neo4j
//! ignores bookmarks of other databases.

use crate::errors::Neo4jError;
use base64::Engine;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

const MAGIC: &[u8; 2] = b"dg";

pub struct Bookmarks {
    epoch: u64,
    last: Mutex<u64>,
    advanced: Condvar,
    /// How long a request waits for a bookmark this server has not reached.
    pub timeout: Duration,
}

impl Bookmarks {
    pub fn new(epoch: u64, timeout: Duration) -> Bookmarks {
        Bookmarks {
            epoch,
            last: Mutex::new(0),
            advanced: Condvar::new(),
            timeout,
        }
    }

    fn encode(&self, n: u64) -> String {
        let mut bytes = Vec::with_capacity(18);
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&self.epoch.to_be_bytes());
        bytes.extend_from_slice(&n.to_be_bytes());
        format!(
            "FB:{}",
            base64::engine::general_purpose::STANDARD.encode(bytes)
        )
    }

    /// The bookmark of the state committed now.
    pub fn current(&self) -> String {
        self.encode(*self.lock())
    }

    /// A commit that changed something: its (new) bookmark.
    pub fn committed(&self) -> String {
        let mut last = self.lock();
        *last += 1;
        let bookmark = self.encode(*last);
        self.advanced.notify_all();
        bookmark
    }

    /// `(epoch, number)` of a bookmark, or why it is not one.
    fn decode(bookmark: &str) -> Result<(u64, u64), &'static str> {
        let encoded = bookmark
            .strip_prefix("FB:")
            .ok_or("a bookmark starts with `FB:`")?;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .map_err(|_| "its body is not base64")?;
        if bytes.len() != 18 || &bytes[..2] != MAGIC {
            return Err("this server did not issue it");
        }
        let word = |range: std::ops::Range<usize>| {
            bytes
                .get(range)
                .and_then(|b| <[u8; 8]>::try_from(b).ok())
                .map(u64::from_be_bytes)
                .ok_or("this server did not issue it")
        };
        Ok((word(2..10)?, word(10..18)?))
    }

    /// Checks the bookmarks a request sent and waits until this server has committed as
    /// far as each of them says.
    pub fn wait_for(&self, bookmarks: &[String], database: &str) -> Result<(), Neo4jError> {
        let mut needed = 0;
        for bookmark in bookmarks {
            let (epoch, n) = Bookmarks::decode(bookmark)
                .map_err(|why| Neo4jError::invalid_bookmark(bookmark, why))?;
            if epoch == self.epoch {
                needed = needed.max(n);
            }
        }
        let deadline = Instant::now() + self.timeout;
        let mut last = self.lock();
        while *last < needed {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Neo4jError::new(
                    400,
                    "Neo.TransientError.Transaction.BookmarkTimeout",
                    format!(
                        "Database '{database}' not up to the requested version: {needed}. Latest database version is {}",
                        *last
                    ),
                ));
            }
            last = self
                .advanced
                .wait_timeout(last, left)
                .map(|(guard, _)| guard)
                .unwrap_or_else(|p| p.into_inner().0);
        }
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, u64> {
        self.last.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A bookmark of a given epoch and number (tests: one from the future).
pub fn forge(epoch: u64, n: u64) -> String {
    Bookmarks::new(epoch, Duration::ZERO).encode(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bookmarks_advance_only_on_changes_and_are_checked() {
        let b = Bookmarks::new(7, Duration::from_millis(50));
        let first = b.current();
        assert_eq!(b.current(), first);
        let second = b.committed();
        assert_ne!(second, first);
        assert_eq!(b.current(), second);
        b.wait_for(&[first, second.clone()], "neo4j").unwrap();
        // Another epoch: another database's state, ignored.
        b.wait_for(&[forge(8, 99)], "neo4j").unwrap();
        let e = b.wait_for(&[forge(7, 5)], "neo4j").unwrap_err();
        assert_eq!(e.code, "Neo.TransientError.Transaction.BookmarkTimeout");
        for bad in ["", "FB:", "FB:!!", "XX:abc", "FB:aGVsbG8="] {
            let e = b.wait_for(&[bad.to_string()], "neo4j").unwrap_err();
            assert_eq!(
                e.code, "Neo.ClientError.Transaction.InvalidBookmark",
                "{bad}"
            );
        }
    }
}
