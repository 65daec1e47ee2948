//! Causal consistency: Neo4j bookmarks.
//!
//! On a cluster, a read routed to a follower may not yet see a write that a leader just
//! committed. Every answer carries bookmarks naming the state it committed (or saw); a
//! request that sends bookmarks waits until the server it reaches has applied them. A
//! [`Bookmarks`] chain is shared by the clients of one causal session (one request of ours,
//! and across requests one conversation): each request sends the chain's bookmarks, and
//! each answer advances the chain.
//!
//! Advancing follows Neo4j's bookmark manager: an answer to a request that was sent with
//! bookmarks `sent` supersedes exactly those, so the chain drops `sent` and adds what came
//! back. Requests in flight at once (a batch's chunks) were all sent with the same chain,
//! so the chain ends holding one bookmark per request that was last in its line, never one
//! per request ever sent.

use std::sync::{Arc, Mutex, MutexGuard};

#[derive(Debug, Clone, Default)]
pub struct Bookmarks(Arc<Mutex<Vec<String>>>);

impl Bookmarks {
    pub fn new(initial: Vec<String>) -> Self {
        let chain = Bookmarks::default();
        chain.replace(initial);
        chain
    }

    /// What the next request must wait for.
    pub fn current(&self) -> Vec<String> {
        self.lock().clone()
    }

    /// Starts the chain over from `bookmarks` (e.g. those remembered with a conversation).
    pub fn replace(&self, bookmarks: Vec<String>) {
        let mut chain = self.lock();
        chain.clear();
        for b in bookmarks {
            if !b.is_empty() && !chain.contains(&b) {
                chain.push(b);
            }
        }
    }

    /// Records the answer to a request that was sent with `sent` and returned `returned`.
    /// An answer without bookmarks (a server that does not send them) changes nothing.
    pub fn advance(&self, sent: &[String], returned: &[String]) {
        if returned.is_empty() {
            return;
        }
        let mut chain = self.lock();
        chain.retain(|b| !sent.contains(b));
        for b in returned {
            if !b.is_empty() && !chain.contains(b) {
                chain.push(b.clone());
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, Vec<String>> {
        // A panic while holding the lock leaves a plain Vec behind: still usable.
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn a_sequence_of_answers_leaves_the_last_bookmark() {
        let chain = Bookmarks::default();
        chain.advance(&chain.current(), &s(&["b1"]));
        chain.advance(&chain.current(), &s(&["b2"]));
        assert_eq!(chain.current(), s(&["b2"]));
    }

    #[test]
    fn concurrent_answers_are_all_kept_then_superseded_together() {
        let chain = Bookmarks::new(s(&["b0"]));
        let sent = chain.current();
        chain.advance(&sent, &s(&["b1"]));
        chain.advance(&sent, &s(&["b2"]));
        chain.advance(&sent, &s(&["b3"]));
        assert_eq!(chain.current(), s(&["b1", "b2", "b3"]));
        let sent = chain.current();
        chain.advance(&sent, &s(&["b4"]));
        assert_eq!(chain.current(), s(&["b4"]));
    }

    #[test]
    fn an_answer_without_bookmarks_keeps_the_chain() {
        let chain = Bookmarks::new(s(&["b0"]));
        chain.advance(&chain.current(), &[]);
        assert_eq!(chain.current(), s(&["b0"]));
    }

    #[test]
    fn replace_drops_empty_and_duplicate_bookmarks() {
        let chain = Bookmarks::new(s(&["a", "", "a", "b"]));
        assert_eq!(chain.current(), s(&["a", "b"]));
    }
}
