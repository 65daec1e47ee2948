//! A streamed turn's events, kept in the key-value store for a while so a client that lost
//! the stream can pick it up again with `Last-Event-ID` (issue #16 item 3). Every event
//! carries the SSE id `<turn>:<seq>` (seq from 1). Frames are kept in memory and written
//! in chunks — at once for anything but answer deltas, which come many a second and are
//! written every [`FLUSH_FRAMES`] frames or [`FLUSH_MS`] — each chunk under its own key,
//! then the turn's `meta` (owner, chunk count, done). A reader reads `meta` first, so it
//! only ever reads whole chunks. A turn's keys are removed once [`Meta::expired`]: when a
//! later turn starts (through a small index of turns) or when a reader finds them so.

use crate::memory::Kv;
use serde::{Deserialize, Serialize};

/// Most answer deltas kept in memory before they are written.
pub const FLUSH_FRAMES: usize = 32;
/// Longest time a delta waits to be written.
pub const FLUSH_MS: u64 = 250;
/// A running turn that has not written for this long is lost (its instance died).
pub const STALE_MS: u64 = 120_000;
/// Turns the index holds at most (the oldest beyond are forgotten, their keys removed).
const MAX_INDEXED: usize = 2_000;
const INDEX_KEY: &str = "stream-index";

fn meta_key(turn: &str) -> String {
    format!("stream/{turn}/meta")
}

fn chunk_key(turn: &str, chunk: u32) -> String {
    format!("stream/{turn}/{chunk}")
}

/// A turn id: `t` and letters, digits, `-` or `_`, at most 64 characters.
pub fn check_turn_id(turn: &str) -> Result<(), String> {
    let ok = turn.len() <= 64
        && turn.starts_with('t')
        && turn
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(format!("`{turn}` is not a turn id"))
    }
}

/// The SSE id of a turn's `seq`-th event.
pub fn event_id(turn: &str, seq: u64) -> String {
    format!("{turn}:{seq}")
}

/// `Last-Event-ID` (`<turn>:<seq>`) as (turn, seq).
pub fn parse_event_id(value: &str) -> Result<(String, u64), String> {
    let bad = || format!("Last-Event-ID `{value}` is not `<turn>:<sequence>`");
    let (turn, seq) = value.trim().rsplit_once(':').ok_or_else(bad)?;
    check_turn_id(turn).map_err(|_| bad())?;
    let seq = seq.parse::<u64>().map_err(|_| bad())?;
    Ok((turn.to_string(), seq))
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    /// The subject whose turn it is.
    pub owner: String,
    /// Chunks written (`0..chunks`).
    pub chunks: u32,
    /// The stream ended (`done` is in the last chunk).
    pub done: bool,
    /// Epoch ms of the last write.
    pub updated_ms: u64,
}

impl Meta {
    pub fn expired(&self, now_ms: u64, retention_ms: u64) -> bool {
        now_ms.saturating_sub(self.updated_ms) > retention_ms
    }
    /// Still running, but nobody has written for [`STALE_MS`].
    pub fn stale(&self, now_ms: u64) -> bool {
        !self.done && now_ms.saturating_sub(self.updated_ms) > STALE_MS
    }
}

/// One stored frame: its sequence number and its whole SSE text (`id:` line included).
pub type Frame = (u64, String);

/// Writes one turn's frames as they are sent.
pub struct Recorder {
    turn: String,
    owner: String,
    seq: u64,
    chunks: u32,
    buffer: Vec<Frame>,
    last_flush_ms: u64,
}

impl Recorder {
    /// Starts recording `turn`, first removing the turns that expired.
    pub fn start(kv: &dyn Kv, turn: &str, owner: &str, now_ms: u64, retention_ms: u64) -> Self {
        if let Err(e) = prune(kv, turn, now_ms, retention_ms) {
            eprintln!("agent: could not prune the stored streams: {e}");
        }
        Recorder {
            turn: turn.into(),
            owner: owner.into(),
            seq: 0,
            chunks: 0,
            buffer: Vec::new(),
            last_flush_ms: now_ms,
        }
    }

    pub fn turn(&self) -> &str {
        &self.turn
    }

    /// The next event's sequence number.
    pub fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// Keeps a frame; writes what is kept unless `delta` (an answer delta) and neither
    /// enough frames nor enough time have gathered.
    pub fn record(&mut self, kv: &dyn Kv, frame: Frame, delta: bool, now_ms: u64) {
        self.buffer.push(frame);
        let due = !delta
            || self.buffer.len() >= FLUSH_FRAMES
            || now_ms.saturating_sub(self.last_flush_ms) >= FLUSH_MS;
        if due {
            self.flush(kv, false, now_ms);
        }
    }

    /// Writes the kept frames as one chunk, then `meta` (`done`: the stream ended).
    pub fn flush(&mut self, kv: &dyn Kv, done: bool, now_ms: u64) {
        self.last_flush_ms = now_ms;
        if !self.buffer.is_empty() {
            let chunk = match serde_json::to_vec(&self.buffer) {
                Ok(chunk) => chunk,
                Err(e) => return eprintln!("agent: could not encode a stream chunk: {e}"),
            };
            if let Err(e) = kv.set(&chunk_key(&self.turn, self.chunks), &chunk) {
                // The live stream goes on; a resume will miss these frames.
                return eprintln!("agent: could not keep a stream chunk: {e}");
            }
            self.chunks += 1;
            self.buffer.clear();
        }
        let meta = Meta {
            owner: self.owner.clone(),
            chunks: self.chunks,
            done,
            updated_ms: now_ms,
        };
        let written = serde_json::to_vec(&meta)
            .map_err(|e| e.to_string())
            .and_then(|m| kv.set(&meta_key(&self.turn), &m));
        if let Err(e) = written {
            eprintln!("agent: could not keep a stream's state: {e}");
        }
    }
}

/// Why a stored turn cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// No such turn, or not the caller's (the same answer, so ids leak nothing).
    NotFound,
    /// It was kept, but its retention has passed.
    Expired,
    Store(String),
}

/// The turn's state, if `subject` (or an admin) may read it.
pub fn open(
    kv: &dyn Kv,
    turn: &str,
    subject: &str,
    admin: bool,
    now_ms: u64,
    retention_ms: u64,
) -> Result<Meta, Refused> {
    check_turn_id(turn).map_err(|_| Refused::NotFound)?;
    let meta = read_meta(kv, turn)
        .map_err(Refused::Store)?
        .ok_or(Refused::NotFound)?;
    if meta.owner != subject && !admin {
        return Err(Refused::NotFound);
    }
    if meta.expired(now_ms, retention_ms) {
        remove(kv, turn, meta.chunks).map_err(Refused::Store)?;
        return Err(Refused::Expired);
    }
    Ok(meta)
}

pub fn read_meta(kv: &dyn Kv, turn: &str) -> Result<Option<Meta>, String> {
    match kv.get(&meta_key(turn))? {
        Some(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| format!("stream state of {turn}: {e}")),
        None => Ok(None),
    }
}

/// The frames of chunks `from..to`, in order.
pub fn read_chunks(kv: &dyn Kv, turn: &str, from: u32, to: u32) -> Result<Vec<Frame>, String> {
    let mut frames = Vec::new();
    for chunk in from..to {
        let Some(bytes) = kv.get(&chunk_key(turn, chunk))? else {
            return Err(format!("chunk {chunk} of {turn} is missing"));
        };
        let mut part: Vec<Frame> =
            serde_json::from_slice(&bytes).map_err(|e| format!("chunk {chunk} of {turn}: {e}"))?;
        frames.append(&mut part);
    }
    Ok(frames)
}

fn remove(kv: &dyn Kv, turn: &str, chunks: u32) -> Result<(), String> {
    for chunk in 0..chunks {
        kv.delete(&chunk_key(turn, chunk))?;
    }
    kv.delete(&crate::attach::attach_key(turn))?;
    kv.delete(&meta_key(turn))
}

/// Adds `turn` to the index of kept turns and removes the expired ones. Two turns starting
/// at once may each miss the other's entry: that turn is then only removed when a reader
/// finds it expired.
fn prune(kv: &dyn Kv, turn: &str, now_ms: u64, retention_ms: u64) -> Result<(), String> {
    let mut index: Vec<(String, u64)> = match kv.get(INDEX_KEY)? {
        Some(bytes) => serde_json::from_slice(&bytes).unwrap_or_default(),
        None => Vec::new(),
    };
    let mut kept = Vec::with_capacity(index.len() + 1);
    let overflow = (index.len() + 1).saturating_sub(MAX_INDEXED);
    for (i, (old, started)) in index.drain(..).enumerate() {
        // A turn may outlive its start by its own length: judge it by its last write.
        let gone = i < overflow
            || (now_ms.saturating_sub(started) > retention_ms
                && match read_meta(kv, &old)? {
                    Some(meta) => meta.expired(now_ms, retention_ms),
                    None => true,
                });
        if gone {
            let chunks = read_meta(kv, &old)?.map_or(0, |m| m.chunks);
            remove(kv, &old, chunks)?;
        } else {
            kept.push((old, started));
        }
    }
    kept.push((turn.to_string(), now_ms));
    let bytes = serde_json::to_vec(&kept).map_err(|e| e.to_string())?;
    kv.set(INDEX_KEY, &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::tests::MemKv;
    use proptest::prelude::*;

    fn frame(seq: u64) -> Frame {
        (seq, format!("id: t1:{seq}\nevent: content\ndata: {{}}\n\n"))
    }

    #[test]
    fn deltas_are_written_in_chunks_and_everything_else_at_once() {
        let kv = MemKv::default();
        let mut r = Recorder::start(&kv, "t1", "alice", 0, 600_000);
        for seq in 1..=10 {
            r.record(&kv, frame(seq), true, 10);
        }
        assert_eq!(read_meta(&kv, "t1").unwrap(), None, "ten deltas wait");
        r.record(&kv, frame(11), false, 20);
        let meta = read_meta(&kv, "t1").unwrap().unwrap();
        assert_eq!((meta.chunks, meta.done), (1, false));
        for seq in 12..=13 {
            r.record(&kv, frame(seq), true, 20 + FLUSH_MS);
        }
        r.flush(&kv, true, 30 + FLUSH_MS);
        let meta = open(&kv, "t1", "alice", false, 40 + FLUSH_MS, 600_000).unwrap();
        assert!(meta.done);
        let seqs: Vec<u64> = read_chunks(&kv, "t1", 0, meta.chunks)
            .unwrap()
            .into_iter()
            .map(|f| f.0)
            .collect();
        assert_eq!(seqs, (1..=13).collect::<Vec<_>>());
    }

    #[test]
    fn only_the_owner_or_an_admin_reads_and_expired_turns_are_removed() {
        let kv = MemKv::default();
        let mut r = Recorder::start(&kv, "t1", "alice", 0, 1_000);
        r.record(&kv, frame(1), false, 0);
        assert_eq!(
            open(&kv, "t1", "bob", false, 10, 1_000),
            Err(Refused::NotFound)
        );
        assert!(open(&kv, "t1", "bob", true, 10, 1_000).is_ok());
        assert_eq!(
            open(&kv, "t2", "alice", false, 10, 1_000),
            Err(Refused::NotFound)
        );
        assert_eq!(
            open(&kv, "t1", "alice", false, 5_000, 1_000),
            Err(Refused::Expired)
        );
        assert!(kv.0.borrow().keys().all(|k| !k.starts_with("stream/t1")));
    }

    #[test]
    fn a_new_turn_removes_the_expired_ones() {
        let kv = MemKv::default();
        let mut old = Recorder::start(&kv, "t1", "alice", 0, 1_000);
        old.record(&kv, frame(1), false, 0);
        let mut recent = Recorder::start(&kv, "t2", "alice", 500, 1_000);
        recent.record(&kv, frame(1), false, 900);
        Recorder::start(&kv, "t3", "alice", 1_800, 1_000);
        assert_eq!(read_meta(&kv, "t1").unwrap(), None);
        assert!(read_meta(&kv, "t2").unwrap().is_some());
    }

    #[test]
    fn bad_event_ids_are_refused() {
        assert_eq!(
            parse_event_id("t-9_a:12").unwrap(),
            ("t-9_a".to_string(), 12)
        );
        for bad in ["", "t1", "t1:", "t1:x", "x1:3", "t1:-1", "t/1:2", "t1:2:3"] {
            assert!(parse_event_id(bad).is_err(), "{bad}");
        }
    }

    proptest! {
        /// Whatever mix of deltas and other events, at whatever times: what a reader finds
        /// after the end is every frame once, in order.
        #[test]
        fn every_frame_is_kept_once_in_order(kinds in proptest::collection::vec((any::<bool>(), 0u64..400), 0..200)) {
            let kv = MemKv::default();
            let mut r = Recorder::start(&kv, "t1", "alice", 0, u64::MAX);
            let mut now = 0;
            for (delta, step) in &kinds {
                now += step;
                let seq = r.next_seq();
                r.record(&kv, frame(seq), *delta, now);
            }
            r.flush(&kv, true, now);
            let meta = read_meta(&kv, "t1").unwrap().unwrap();
            prop_assert!(meta.done);
            let seqs: Vec<u64> = read_chunks(&kv, "t1", 0, meta.chunks).unwrap().into_iter().map(|f| f.0).collect();
            prop_assert_eq!(seqs, (1..=kinds.len() as u64).collect::<Vec<_>>());
        }
    }
}
