//! A streamed turn whose client went away keeps running for a grace period, so a client
//! cut off by a proxy can reconnect (`GET /chat/stream/{turn_id}` with `Last-Event-ID`)
//! and get the rest (issue #16 items 2 and 3 together). A resuming reader marks the turn
//! attached in the key-value store with a timestamp it refreshes while it streams; the
//! detached turn looks at that mark, at most every [`CHECK_MS`], wherever it asks whether
//! its client is still there. It goes on until the grace period has run out since the
//! disconnect and since the mark's last refresh — a mark counting as a present reader for
//! at least [`STALE_MS`], so a short grace does not race the refresh; after that it is
//! abandoned and cancels as a turn with grace 0 does at once.
//!
//! The mark lives under the turn's stream keys (`stream/<turn>/attached`), so it is
//! removed with them ([`crate::replay`]).

use crate::memory::Kv;

/// How often a reader refreshes its mark while it streams.
pub const REFRESH_MS: u64 = 1_000;
/// Least time between two reads of the mark by a detached turn.
pub const CHECK_MS: u64 = 500;
/// A mark younger than this means a reader is there, whatever the grace: a few missed
/// refreshes (a slow store, a busy instance) do not drop it.
pub const STALE_MS: u64 = 3 * REFRESH_MS;

pub(crate) fn attach_key(turn: &str) -> String {
    format!("stream/{turn}/attached")
}

/// Marks `turn` as read by a live client at `now_ms` (epoch ms).
pub fn mark(kv: &dyn Kv, turn: &str, now_ms: u64) -> Result<(), String> {
    kv.set(&attach_key(turn), now_ms.to_string().as_bytes())
}

/// When a reader last marked `turn` (epoch ms), if one ever did.
pub fn last_mark(kv: &dyn Kv, turn: &str) -> Result<Option<u64>, String> {
    Ok(kv
        .get(&attach_key(turn))?
        .and_then(|bytes| std::str::from_utf8(&bytes).ok()?.trim().parse().ok()))
}

/// A reader that keeps its mark fresh: [`Marker::due`] says when to write it again.
#[derive(Debug, Default)]
pub struct Marker {
    last_ms: Option<u64>,
}

impl Marker {
    /// Writes the mark if it was never written or is [`REFRESH_MS`] old.
    pub fn refresh(&mut self, kv: &dyn Kv, turn: &str, now_ms: u64) {
        if self
            .last_ms
            .is_some_and(|last| now_ms.saturating_sub(last) < REFRESH_MS)
        {
            return;
        }
        // A failed write is tried again at the next poll; the turn's grace covers the gap.
        match mark(kv, turn, now_ms) {
            Ok(()) => self.last_ms = Some(now_ms),
            Err(e) => eprintln!("agent: could not mark {turn} as read: {e}"),
        }
    }
}

/// The running turn's side: whether, with its client gone, it should stop.
#[derive(Debug)]
pub struct Watch {
    turn: String,
    grace_ms: u64,
    /// Epoch ms until which the turn goes on: set at the disconnect, pushed back by marks.
    deadline_ms: Option<u64>,
    /// When the mark was last read (reads are spaced by [`CHECK_MS`]).
    checked_ms: Option<u64>,
    abandoned: bool,
}

impl Watch {
    /// `grace_ms` 0: a turn stops as soon as its client is gone.
    pub fn new(turn: &str, grace_ms: u64) -> Watch {
        Watch {
            turn: turn.into(),
            grace_ms,
            deadline_ms: None,
            checked_ms: None,
            abandoned: false,
        }
    }

    /// True when the turn should stop: its own client is gone (`client_gone`) and no
    /// reader has shown itself for longer than the grace period. Once true, stays true.
    pub fn abandoned(&mut self, client_gone: bool, now_ms: u64, kv: &dyn Kv) -> bool {
        if self.abandoned || !client_gone {
            return self.abandoned;
        }
        if self.grace_ms == 0 {
            self.abandoned = true;
            return true;
        }
        let deadline = *self
            .deadline_ms
            .get_or_insert(now_ms.saturating_add(self.grace_ms));
        let expired = now_ms > deadline;
        let check_due = self
            .checked_ms
            .is_none_or(|checked| now_ms.saturating_sub(checked) >= CHECK_MS);
        // Before giving up, always look once more: a reader may have just attached.
        if check_due || expired {
            self.checked_ms = Some(now_ms);
            match last_mark(kv, &self.turn) {
                Ok(Some(marked)) => {
                    let held = marked.saturating_add(self.grace_ms.max(STALE_MS));
                    self.deadline_ms = Some(deadline.max(held));
                }
                Ok(None) => {}
                // Unreadable: no reader is known, so the deadline stands.
                Err(e) => eprintln!("agent: could not read whether {} is read: {e}", self.turn),
            }
        }
        self.abandoned = self.deadline_ms.is_some_and(|deadline| now_ms > deadline);
        self.abandoned
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::tests::{MemKv, WatchedKv};
    use proptest::prelude::*;

    #[test]
    fn a_present_client_never_abandons_and_grace_zero_stops_at_once() {
        let kv = WatchedKv::default();
        let mut watch = Watch::new("t1", 0);
        assert!(!watch.abandoned(false, 1_000_000, &kv));
        assert!(watch.abandoned(true, 1_000_001, &kv));
        assert!(watch.abandoned(false, 1_000_002, &kv), "stays abandoned");
        assert_eq!(kv.reads(), 0, "grace 0 never reads the store");
    }

    #[test]
    fn without_a_reader_the_turn_stops_once_the_grace_has_run_out() {
        let kv = WatchedKv::default();
        let mut watch = Watch::new("t1", 15_000);
        let left = 1_000_000;
        for t in (left..=left + 15_000).step_by(20) {
            assert!(!watch.abandoned(true, t, &kv), "{t}");
        }
        assert!(watch.abandoned(true, left + 15_001, &kv));
        // One read per CHECK_MS at most (plus the last look before giving up).
        assert!(
            kv.reads() <= 15_000 / CHECK_MS as usize + 2,
            "{}",
            kv.reads()
        );
    }

    #[test]
    fn an_attached_reader_keeps_the_turn_going_until_its_mark_goes_stale() {
        let kv = WatchedKv::default();
        let mut watch = Watch::new("t1", 5_000);
        let left = 1_000_000;
        assert!(!watch.abandoned(true, left, &kv));
        // A reader attaches after 4 s and keeps its mark fresh for 20 s.
        let mut marker = Marker::default();
        let mut t = left;
        while t < left + 24_000 {
            if t >= left + 4_000 {
                marker.refresh(&kv, "t1", t);
            }
            assert!(!watch.abandoned(true, t, &kv), "{t}");
            t += 50;
        }
        // It left at ~24 s (last mark at most REFRESH_MS before): the turn stops within
        // the grace after that mark.
        let last = last_mark(&kv, "t1").unwrap().unwrap();
        assert!(!watch.abandoned(true, last + 5_000, &kv));
        assert!(watch.abandoned(true, last + 5_001, &kv));
    }

    #[test]
    fn a_mark_from_before_the_disconnect_does_not_shorten_the_grace() {
        let kv = MemKv::default();
        mark(&kv, "t1", 1_000).unwrap();
        let mut watch = Watch::new("t1", 2_000);
        assert!(!watch.abandoned(true, 10_000, &kv));
        assert!(!watch.abandoned(true, 12_000, &kv));
        assert!(watch.abandoned(true, 12_001, &kv));
    }

    #[test]
    fn a_reader_attached_just_before_the_deadline_is_seen() {
        let kv = MemKv::default();
        let mut watch = Watch::new("t1", 1_000);
        assert!(!watch.abandoned(true, 0, &kv));
        assert!(!watch.abandoned(true, 900, &kv));
        // Marked after the last look; the deadline check looks again. A mark holds the
        // turn for STALE_MS at least, longer than this short grace.
        mark(&kv, "t1", 950).unwrap();
        assert!(!watch.abandoned(true, 1_001, &kv));
        assert!(!watch.abandoned(true, 950 + STALE_MS, &kv));
        assert!(watch.abandoned(true, 951 + STALE_MS, &kv));
    }

    proptest! {
        /// Whatever the marks and the polling, the turn is abandoned exactly when the grace
        /// has run out since the disconnect and the last mark has gone stale (older than
        /// the grace and than STALE_MS), and never comes back.
        #[test]
        fn abandonment_follows_the_last_sign(
            grace in 1u64..5_000,
            steps in proptest::collection::vec((1u64..400, any::<bool>()), 1..300),
        ) {
            let kv = MemKv::default();
            let mut watch = Watch::new("t1", grace);
            let mut now = 10_000u64;
            let mut alive_until = now + grace;
            let mut stopped_at = None;
            for (dt, reader) in steps {
                if reader && stopped_at.is_none() {
                    mark(&kv, "t1", now).unwrap();
                    alive_until = alive_until.max(now + grace.max(STALE_MS));
                }
                let abandoned = watch.abandoned(true, now, &kv);
                match stopped_at {
                    Some(_) => prop_assert!(abandoned, "abandonment is final"),
                    None if abandoned => {
                        prop_assert!(now > alive_until, "stopped early at {now}");
                        stopped_at = Some(now);
                    }
                    None => prop_assert!(now <= alive_until, "stopped late at {now}"),
                }
                now += dt;
            }
        }
    }
}
