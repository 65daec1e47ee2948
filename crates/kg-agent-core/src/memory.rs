//! Conversation memory in a key-value store (Spin KV: values ≤ 1 MB, no compare-and-swap,
//! no prefix listing).
//!
//! Layout, one conversation `c`:
//! - `conv/c/count`: how many turn slots were taken, an atomic counter ([`Kv::increment`]);
//! - `conv/c/t/<n:012>`: the turn in slot `n` (1, 2, …), written once, never rewritten;
//! - `conv/c/summary`: `{"through": <position>, "text": …}`, the older turns folded;
//! - `conv/c/legacy`: only for a conversation begun before this layout (see
//!   [`crate::legacy`]): its turns' keys as earlier versions wrote them
//!   (`conv/c/turn/<micros>-<random>`, never rewritten) and its running summaries'
//!   (`conv/c/summary/<suffix>`);
//! - `conv/c/bookmarks` (graph bookmarks) and `conv/c/pending` (a plan waiting for approval).
//!
//! A conversation's turns are its legacy turns, in key order, then slots 1..count; a turn's
//! *position* counts over that whole sequence (1-based). Appending takes a slot with one
//! atomic increment, so two concurrent requests on one conversation write different keys and
//! neither can lose the other's turn, on any number of instances; reading needs the counter
//! and the keys it names, never a listing of the store. A slot whose write never landed (the
//! request died between the increment and its batch) or has not landed yet (a turn still
//! running) is a gap, skipped by every reader; the two cannot be told apart, so nobody waits
//! for a gap. No value grows: a turn is capped at [`MAX_TURN_BYTES`], a summary at
//! [`MAX_SUMMARY_CHARS`]. Each reader first reads the marker of the one-time indexing of
//! the earlier layout ([`crate::legacy::ensure_indexed`]): one read per request.
//!
//! A request reads only the recent window of turns and the summary ([`load_window`]); turns
//! that slid out of the window since that summary was written are folded into it, so the
//! work per request stays bounded however long the conversation gets. Two requests folding
//! at once both write the summary; the last write wins, and that is safe because turns are
//! never deleted and [`fold`] is deterministic: a summary through an earlier position only
//! makes the next request fold again from there. (A turn still being written by a
//! concurrent request when its slot is folded is a gap then, and stays out of the summary,
//! though not out of the conversation's history ([`load`]). Earlier versions, which named
//! turns by time, had the same blind spot.)

use crate::legacy::Legacy;
use serde::{Deserialize, Serialize};

/// The store as the memory needs it.
pub trait Kv {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, String>;
    fn set(&self, key: &str, value: &[u8]) -> Result<(), String>;
    fn delete(&self, key: &str) -> Result<(), String>;
    /// Every key of the store (Spin KV offers no prefix listing): a cost that grows with
    /// the whole store, so only the one-time migration of the legacy layout lists them
    /// ([`crate::legacy::migrate`]).
    fn keys(&self) -> Result<Vec<String>, String>;
    /// Writes `entries` together: one commit where the store offers it (Spin's and
    /// devhost's `wasi:keyvalue/batch` set-many is one SQLite transaction, one Redis
    /// MSET), else one `set` each.
    fn set_many(&self, entries: &[(String, Vec<u8>)]) -> Result<(), String> {
        entries.iter().try_for_each(|(k, v)| self.set(k, v))
    }
    /// A write that may wait for the end of the turn writing it, to leave with the turn's
    /// other writes in one [`Self::set_many`] ([`Journal`]); outside a turn, a `set`.
    /// Only for keys that no other request needs before the turn ends: a conversation's
    /// turns, its bookmarks, a new conversation's owner.
    fn defer(&self, key: &str, value: &[u8]) -> Result<(), String> {
        self.set(key, value)
    }
    /// Writes what was deferred so far, in one batch; how many keys (none outside a turn).
    fn flush(&self) -> Result<usize, String> {
        Ok(0)
    }
    /// Adds `delta` to the counter under `key` (absent: 0) and answers its new value, in
    /// one atomic step where the store offers it (`wasi:keyvalue/atomics`, Spin 3+ and
    /// devhost): of concurrent callers on any instance, exactly one sees each value. This
    /// default is a read then a write, atomic only for a store nobody else writes (tests).
    /// The value is 8 bytes little-endian, as Spin's SQLite store keeps a counter.
    fn increment(&self, key: &str, delta: i64) -> Result<i64, String> {
        let now = match self.get(key)? {
            Some(bytes) => i64::from_le_bytes(
                bytes
                    .as_slice()
                    .try_into()
                    .map_err(|_| format!("`{key}` is not a counter"))?,
            ),
            None => 0,
        }
        .saturating_add(delta);
        self.set(key, &now.to_le_bytes())?;
        Ok(now)
    }
}

/// A turn's view of the store: [`Kv::defer`]red writes are kept and leave together in one
/// [`Kv::set_many`] at each [`Kv::flush`]; everything else goes straight through. Reads
/// see the kept writes (a turn reads what it wrote). Each commit is an fsync'd SQLite
/// transaction on Spin's default store (about 3 ms here, issue #36).
pub struct Journal<'a> {
    inner: &'a dyn Kv,
    kept: std::cell::RefCell<Vec<(String, Vec<u8>)>>,
}

impl<'a> Journal<'a> {
    pub fn new(inner: &'a dyn Kv) -> Self {
        Journal {
            inner,
            kept: Default::default(),
        }
    }

    fn forget(&self, key: &str) {
        self.kept.borrow_mut().retain(|(k, _)| k != key);
    }
}

impl Kv for Journal<'_> {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, String> {
        let kept = self.kept.borrow();
        match kept.iter().rev().find(|(k, _)| k == key) {
            Some((_, v)) => Ok(Some(v.clone())),
            None => self.inner.get(key),
        }
    }
    fn set(&self, key: &str, value: &[u8]) -> Result<(), String> {
        // Written now, so a kept older value must not overwrite it at the flush.
        self.forget(key);
        self.inner.set(key, value)
    }
    fn delete(&self, key: &str) -> Result<(), String> {
        self.forget(key);
        self.inner.delete(key)
    }
    fn keys(&self) -> Result<Vec<String>, String> {
        let mut keys = self.inner.keys()?;
        for (k, _) in self.kept.borrow().iter() {
            if !keys.contains(k) {
                keys.push(k.clone());
            }
        }
        Ok(keys)
    }
    fn set_many(&self, entries: &[(String, Vec<u8>)]) -> Result<(), String> {
        for (k, _) in entries {
            self.forget(k);
        }
        self.inner.set_many(entries)
    }
    fn defer(&self, key: &str, value: &[u8]) -> Result<(), String> {
        self.forget(key);
        self.kept
            .borrow_mut()
            .push((key.to_string(), value.to_vec()));
        Ok(())
    }
    fn increment(&self, key: &str, delta: i64) -> Result<i64, String> {
        self.forget(key);
        self.inner.increment(key, delta)
    }
    fn flush(&self) -> Result<usize, String> {
        let kept = std::mem::take(&mut *self.kept.borrow_mut());
        if kept.is_empty() {
            return Ok(0);
        }
        self.inner.set_many(&kept)?;
        Ok(kept.len())
    }
}

/// Largest turn stored; longer content is cut (Spin KV values are limited to 1 MB).
pub const MAX_TURN_BYTES: usize = 256 * 1024;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    /// `user`, `assistant` or `tool`.
    pub role: String,
    pub content: String,
    /// Tool name for `tool` turns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// RFC 3339.
    pub at: String,
    /// The router's intent for user turns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Conversation {
    pub turns: Vec<Turn>,
    pub summary: Option<String>,
}

/// A conversation id: 1–64 of `A-Z a-z 0-9 _ -`, so it is safe inside a key.
pub fn check_id(id: &str) -> Result<(), String> {
    let ok = (1..=64).contains(&id.len())
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "conversation id must be 1 to 64 letters, digits, `_` or `-`, got {:?}",
            id.chars().take(80).collect::<String>()
        ))
    }
}

fn prefix(conversation: &str) -> String {
    format!("conv/{conversation}/")
}

fn count_key(conversation: &str) -> String {
    format!("{}count", prefix(conversation))
}

fn slot_key(conversation: &str, slot: u64) -> String {
    format!("{}t/{slot:012}", prefix(conversation))
}

fn summary_key(conversation: &str) -> String {
    format!("{}summary", prefix(conversation))
}

/// How far a reader looking for a conversation's first or newest turn walks past gaps.
const GAP_REACH: usize = 16;

/// The value of the counter under `key` (absent: 0), by a plain read. Spin's SQLite store
/// (and devhost's) keeps a counter as 8 bytes little-endian, its Redis store as decimal
/// text (`INCRBY`); an 8-byte value of digits only would be a count above 3·10¹⁸ as bytes,
/// so it is text. Anything else (another backend's form) is asked of the store with an
/// increment by 0, which every backend answers but which is a write transaction on SQLite:
/// hence the read first (`kg_http::limits::stored_counter` reads the token counters so).
pub fn counter(kv: &dyn Kv, key: &str) -> Result<u64, String> {
    let Some(bytes) = kv.get(key)? else {
        return Ok(0);
    };
    if (1..=18).contains(&bytes.len())
        && bytes.iter().all(u8::is_ascii_digit)
        && let Some(n) = std::str::from_utf8(&bytes)
            .ok()
            .and_then(|t| t.parse().ok())
    {
        return Ok(n);
    }
    if let Ok(le) = <[u8; 8]>::try_from(bytes.as_slice()) {
        return Ok(u64::try_from(i64::from_le_bytes(le)).unwrap_or(0));
    }
    Ok(u64::try_from(kv.increment(key, 0)?).unwrap_or(0))
}

/// Stores a turn in the conversation's next slot: one atomic increment of its counter, then
/// the turn as a [`Kv::defer`]red write (it leaves with the turn's other writes). Answers
/// the key written.
pub fn append(kv: &dyn Kv, conversation: &str, mut turn: Turn) -> Result<String, String> {
    check_id(conversation)?;
    if turn.content.len() > MAX_TURN_BYTES {
        let mut cut = MAX_TURN_BYTES;
        while !turn.content.is_char_boundary(cut) {
            cut -= 1;
        }
        turn.content.truncate(cut);
        turn.content.push_str(" …[truncated]");
    }
    let value = serde_json::to_vec(&turn).map_err(|e| e.to_string())?;
    let slot = kv.increment(&count_key(conversation), 1)?;
    let slot = u64::try_from(slot)
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("`{}` went below 1", count_key(conversation)))?;
    let key = slot_key(conversation, slot);
    kv.defer(&key, &value)?;
    Ok(key)
}

/// The running summary as stored: the text of the turns at positions 1..=`through`, folded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Summary {
    through: usize,
    text: String,
}

/// Stores the summary of the turns at positions 1..=`through`. Last writer wins (see the
/// module's documentation); a [`Kv::defer`]red write, as nobody needs it before the turn's
/// next batch (a request that misses it folds again).
pub fn save_summary(
    kv: &dyn Kv,
    conversation: &str,
    through: usize,
    text: &str,
) -> Result<(), String> {
    check_id(conversation)?;
    let text: String = text.chars().take(MAX_TURN_BYTES / 4).collect();
    let value = serde_json::to_vec(&Summary { through, text }).map_err(|e| e.to_string())?;
    kv.defer(&summary_key(conversation), &value)
}

/// A conversation's turn sequence as the store names it: the legacy turns, then the slots.
struct Sequence<'a> {
    conversation: &'a str,
    legacy: Legacy,
    slots: u64,
}

impl<'a> Sequence<'a> {
    /// Two reads: the legacy record and the counter.
    fn open(kv: &dyn Kv, conversation: &'a str) -> Result<Sequence<'a>, String> {
        Ok(Sequence {
            conversation,
            legacy: crate::legacy::of_conversation(kv, conversation)?,
            slots: counter(kv, &count_key(conversation))?,
        })
    }

    /// Positions taken (gaps included).
    fn total(&self) -> usize {
        let slots = usize::try_from(self.slots).unwrap_or(usize::MAX);
        self.legacy.turns.len().saturating_add(slots)
    }

    fn key(&self, position: usize) -> String {
        let legacy = self.legacy.turns.len();
        if position <= legacy {
            crate::legacy::turn_key(self.conversation, &self.legacy.turns[position - 1])
        } else {
            slot_key(self.conversation, (position - legacy) as u64)
        }
    }

    /// The turn at `position` (1..=total); `None` for a gap or a turn that does not decode
    /// (written by a future version, or corrupted).
    fn read(&self, kv: &dyn Kv, position: usize) -> Result<Option<Turn>, String> {
        Ok(kv
            .get(&self.key(position))?
            .and_then(|v| serde_json::from_slice::<Turn>(&v).ok()))
    }

    /// The newest summary: `conv/c/summary`, else the newest legacy one (covering the legacy
    /// turns named up to its suffix). One read, two for a legacy conversation never folded
    /// since. One that does not decode is none (the next fold starts over, deterministically).
    fn summary(&self, kv: &dyn Kv) -> Result<Option<Summary>, String> {
        if let Some(value) = kv.get(&summary_key(self.conversation))? {
            return Ok(serde_json::from_slice(&value).ok());
        }
        let Some(newest) = self.legacy.summaries.last() else {
            return Ok(None);
        };
        let Some(text) = kv.get(&crate::legacy::summary_key(self.conversation, newest))? else {
            return Ok(None);
        };
        Ok(Some(Summary {
            through: self.legacy.turns.iter().filter(|t| *t <= newest).count(),
            text: String::from_utf8_lossy(&text).into_owned(),
        }))
    }

    /// The first turn within [`GAP_REACH`] positions of the start, and its position.
    fn first(&self, kv: &dyn Kv) -> Result<Option<(usize, Turn)>, String> {
        for position in 1..=self.total().min(GAP_REACH) {
            if let Some(turn) = self.read(kv, position)? {
                return Ok(Some((position, turn)));
            }
        }
        Ok(None)
    }

    /// The newest turn within [`GAP_REACH`] positions of the end after `after`.
    fn newest(&self, kv: &dyn Kv, after: usize) -> Result<Option<Turn>, String> {
        let total = self.total();
        let lowest = total.saturating_sub(GAP_REACH).max(after + 1);
        for position in (lowest..=total).rev() {
            if let Some(turn) = self.read(kv, position)? {
                return Ok(Some(turn));
            }
        }
        Ok(None)
    }
}

/// The conversation's turns in order and its newest summary. Reads every turn: for
/// `GET /conversations/{id}`, not for a chat turn ([`load_window`]).
pub fn load(kv: &dyn Kv, conversation: &str) -> Result<Conversation, String> {
    check_id(conversation)?;
    crate::legacy::ensure_indexed(kv)?;
    let sequence = Sequence::open(kv, conversation)?;
    let mut out = Conversation::default();
    for position in 1..=sequence.total() {
        if let Some(turn) = sequence.read(kv, position)? {
            out.turns.push(turn);
        }
    }
    out.summary = sequence.summary(kv)?.map(|s| s.text);
    Ok(out)
}

/// What `GET /conversations` shows of a conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct Outline {
    pub first: Turn,
    pub newest: Turn,
    /// Positions taken (a turn still being written, or lost with its request, included).
    pub turns: usize,
}

/// The conversation's first and newest turns, without reading the ones between: about
/// four reads. `None` for a conversation without turns. The caller has seen the store
/// indexed ([`crate::legacy::ensure_indexed`]).
pub fn outline(kv: &dyn Kv, conversation: &str) -> Result<Option<Outline>, String> {
    check_id(conversation)?;
    let sequence = Sequence::open(kv, conversation)?;
    let Some((at, first)) = sequence.first(kv)? else {
        return Ok(None);
    };
    let newest = sequence.newest(kv, at)?.unwrap_or_else(|| first.clone());
    Ok(Some(Outline {
        first,
        newest,
        turns: sequence.total(),
    }))
}

/// Deletes every key of the conversation (its turns, summaries, bookmarks, pending
/// approval's note, counter and legacy record); returns how many turns and other records
/// it had (0: nothing to delete). One delete per turn, as before; no listing.
pub fn delete(kv: &dyn Kv, conversation: &str) -> Result<usize, String> {
    check_id(conversation)?;
    crate::legacy::ensure_indexed(kv)?;
    let sequence = Sequence::open(kv, conversation)?;
    let mut had = sequence.total() + sequence.legacy.summaries.len();
    for position in 1..=sequence.total() {
        kv.delete(&sequence.key(position))?;
    }
    for suffix in &sequence.legacy.summaries {
        kv.delete(&crate::legacy::summary_key(conversation, suffix))?;
    }
    for key in [
        summary_key(conversation),
        bookmarks_key(conversation),
        crate::approval::conversation_key(conversation),
    ] {
        if kv.get(&key)?.is_some() {
            had += 1;
            kv.delete(&key)?;
        }
    }
    // The counter last: an append that took a slot meanwhile leaves that slot behind it.
    kv.delete(&crate::legacy::record_key(conversation))?;
    kv.delete(&count_key(conversation))?;
    Ok(had)
}

/// Longest running summary kept (characters); the oldest part is dropped first.
pub const MAX_SUMMARY_CHARS: usize = 4_000;

/// What one request needs of a conversation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Window {
    /// The newest turns, oldest first.
    pub recent: Vec<Turn>,
    /// Everything before them, folded.
    pub summary: Option<String>,
    /// Positions taken in the conversation (gaps included).
    pub total: usize,
}

/// The recent `recent` turns and a summary of all older ones, updating the summary when
/// turns have slid out of the window since it was written. Reads the counter, the legacy
/// record, the summary, the window's slots and the slots to fold: nothing else, however
/// large the store.
pub fn load_window(kv: &dyn Kv, conversation: &str, recent: usize) -> Result<Window, String> {
    check_id(conversation)?;
    crate::legacy::ensure_indexed(kv)?;
    let sequence = Sequence::open(kv, conversation)?;
    let total = sequence.total();
    // Walking back from the newest slot, gaps are skipped, but at most this many positions
    // are read: a run of lost writes (or of turns still running elsewhere) cannot make a
    // request read the whole conversation; the window is then shorter.
    let reach = recent.saturating_mul(2).saturating_add(16);
    let mut newer = Vec::new();
    // The window's first position: everything before it is for the summary.
    let mut start = total + 1;
    while start > 1 && newer.len() < recent && total + 1 - start < reach {
        start -= 1;
        if let Some(turn) = sequence.read(kv, start)? {
            newer.push(turn);
        }
    }
    newer.reverse();
    let stored = sequence.summary(kv)?;
    let through = stored.as_ref().map_or(0, |s| s.through);
    let mut summary = stored.map(|s| s.text);
    let older = start - 1;
    if older > through {
        let mut folded = Vec::new();
        for position in through + 1..=older {
            if let Some(turn) = sequence.read(kv, position)? {
                folded.push(turn);
            }
        }
        let text = fold(summary.as_deref(), &folded);
        save_summary(kv, conversation, older, &text)?;
        summary = Some(text);
    }
    Ok(Window {
        recent: newer,
        summary,
        total,
    })
}

/// A running summary: the previous one plus one line per user question and assistant
/// answer (tool notes are dropped), each cut short, the oldest lines dropped past
/// [`MAX_SUMMARY_CHARS`]. Deterministic: no LLM call on the request path.
pub fn fold(previous: Option<&str>, turns: &[Turn]) -> String {
    let mut lines: Vec<String> = previous
        .map(|p| p.lines().map(str::to_string).collect())
        .unwrap_or_default();
    for t in turns {
        let who = match t.role.as_str() {
            "user" => "User",
            "assistant" => "Assistant",
            _ => continue,
        };
        let text: String = t.content.split_whitespace().collect::<Vec<_>>().join(" ");
        let short: String = text.chars().take(200).collect();
        let ellipsis = if text.chars().count() > 200 {
            "…"
        } else {
            ""
        };
        lines.push(format!("{who}: {short}{ellipsis}"));
    }
    while lines.iter().map(|l| l.chars().count() + 1).sum::<usize>() > MAX_SUMMARY_CHARS
        && lines.len() > 1
    {
        lines.remove(0);
    }
    lines.join("\n")
}

/// Splits turns into (older, recent): the LLM sees the recent ones verbatim and a summary
/// of the older ones.
pub fn window(turns: &[Turn], recent: usize) -> (&[Turn], &[Turn]) {
    let split = turns.len().saturating_sub(recent);
    turns.split_at(split)
}

/// Most graph bookmarks kept with a conversation (the newest are kept).
pub const MAX_BOOKMARKS: usize = 16;

fn bookmarks_key(conversation: &str) -> String {
    format!("{}bookmarks", prefix(conversation))
}

/// The graph bookmarks the conversation's last turns ended with (causal consistency: the
/// next turn's reads wait for its writes). Missing or unreadable: none.
pub fn load_bookmarks(kv: &dyn Kv, conversation: &str) -> Result<Vec<String>, String> {
    check_id(conversation)?;
    Ok(kv
        .get(&bookmarks_key(conversation))?
        .and_then(|v| serde_json::from_slice::<Vec<String>>(&v).ok())
        .unwrap_or_default())
}

/// Records that a turn which started from `started` ended with `ended`. A turn that ran
/// concurrently may have stored its own since: those bookmarks are kept beside ours (the
/// rule of Neo4j's bookmark manager), so neither turn's writes are forgotten.
pub fn save_bookmarks(
    kv: &dyn Kv,
    conversation: &str,
    started: &[String],
    ended: &[String],
) -> Result<(), String> {
    check_id(conversation)?;
    if started == ended {
        return Ok(());
    }
    let mut stored = load_bookmarks(kv, conversation)?;
    stored.retain(|b| !started.contains(b) && !ended.contains(b));
    stored.extend(ended.iter().cloned());
    let keep = stored.len().saturating_sub(MAX_BOOKMARKS);
    let value = serde_json::to_vec(&stored[keep..]).map_err(|e| e.to_string())?;
    kv.defer(&bookmarks_key(conversation), &value)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::legacy::{MARKER, migrate};
    use proptest::prelude::*;
    use std::cell::{Cell, RefCell};
    use std::collections::BTreeMap;

    /// The store in memory; `1` counts the listings of its keys ([`Kv::keys`]).
    #[derive(Default)]
    pub struct MemKv(pub RefCell<BTreeMap<String, Vec<u8>>>, pub Cell<usize>);

    impl MemKv {
        /// A store whose (absent) legacy conversations are already indexed.
        pub fn indexed() -> MemKv {
            let kv = MemKv::default();
            kv.set(MARKER, b"1").unwrap();
            kv
        }

        /// Every key, for assertions on the layout.
        pub fn all_keys(&self) -> Vec<String> {
            self.0.borrow().keys().cloned().collect()
        }
    }

    impl Kv for MemKv {
        fn get(&self, key: &str) -> Result<Option<Vec<u8>>, String> {
            Ok(self.0.borrow().get(key).cloned())
        }
        fn set(&self, key: &str, value: &[u8]) -> Result<(), String> {
            if value.len() > 1024 * 1024 {
                return Err("value too large".into());
            }
            self.0.borrow_mut().insert(key.into(), value.to_vec());
            Ok(())
        }
        fn delete(&self, key: &str) -> Result<(), String> {
            self.0.borrow_mut().remove(key);
            Ok(())
        }
        fn keys(&self) -> Result<Vec<String>, String> {
            self.1.set(self.1.get() + 1);
            Ok(self.all_keys())
        }
    }

    /// A [`MemKv`] that records the keys read, how often the keys were listed, each write
    /// (the keys of one `set`, or of one `set_many`), each increment and each delete, for
    /// tests of how sparingly the store is used.
    #[derive(Default)]
    pub struct WatchedKv {
        pub inner: MemKv,
        pub read: RefCell<Vec<String>>,
        pub listed: Cell<usize>,
        pub writes: RefCell<Vec<Vec<String>>>,
        pub increments: RefCell<Vec<String>>,
        pub deletes: Cell<usize>,
    }

    impl WatchedKv {
        /// How many reads there were.
        pub fn reads(&self) -> usize {
            self.read.borrow().len()
        }
    }

    impl Kv for WatchedKv {
        fn get(&self, key: &str) -> Result<Option<Vec<u8>>, String> {
            self.read.borrow_mut().push(key.to_string());
            self.inner.get(key)
        }
        fn set(&self, key: &str, value: &[u8]) -> Result<(), String> {
            self.writes.borrow_mut().push(vec![key.to_string()]);
            self.inner.set(key, value)
        }
        fn delete(&self, key: &str) -> Result<(), String> {
            self.deletes.set(self.deletes.get() + 1);
            self.inner.delete(key)
        }
        fn keys(&self) -> Result<Vec<String>, String> {
            self.listed.set(self.listed.get() + 1);
            self.inner.keys()
        }
        fn set_many(&self, entries: &[(String, Vec<u8>)]) -> Result<(), String> {
            let keys = entries.iter().map(|(k, _)| k.clone()).collect();
            self.writes.borrow_mut().push(keys);
            entries.iter().try_for_each(|(k, v)| self.inner.set(k, v))
        }
        fn increment(&self, key: &str, delta: i64) -> Result<i64, String> {
            self.increments.borrow_mut().push(key.to_string());
            self.inner.increment(key, delta)
        }
    }

    /// A store that keeps counters as Redis does (`INCRBY`: decimal text), or in a form
    /// nobody decodes (`odd`: only its own increment reads it).
    #[derive(Default)]
    struct TextCounters {
        inner: MemKv,
        odd: bool,
        zero_increments: Cell<usize>,
    }

    impl Kv for TextCounters {
        fn get(&self, key: &str) -> Result<Option<Vec<u8>>, String> {
            self.inner.get(key)
        }
        fn set(&self, key: &str, value: &[u8]) -> Result<(), String> {
            self.inner.set(key, value)
        }
        fn delete(&self, key: &str) -> Result<(), String> {
            self.inner.delete(key)
        }
        fn keys(&self) -> Result<Vec<String>, String> {
            self.inner.keys()
        }
        fn increment(&self, key: &str, delta: i64) -> Result<i64, String> {
            if delta == 0 {
                self.zero_increments.set(self.zero_increments.get() + 1);
            }
            let now = match self.inner.get(key)? {
                Some(v) => String::from_utf8(v)
                    .unwrap()
                    .trim_matches('#')
                    .parse()
                    .unwrap(),
                None => 0,
            } + delta;
            let text = if self.odd {
                format!("#{now}#")
            } else {
                now.to_string()
            };
            self.inner.set(key, text.as_bytes())?;
            Ok(now)
        }
    }

    fn turn(role: &str, content: &str) -> Turn {
        Turn {
            role: role.into(),
            content: content.into(),
            name: None,
            at: "t".into(),
            route: None,
        }
    }

    fn contents(turns: &[Turn]) -> Vec<&str> {
        turns.iter().map(|t| t.content.as_str()).collect()
    }

    #[test]
    fn a_journal_keeps_deferred_writes_until_its_flush_and_reads_them_meanwhile() {
        let kv = WatchedKv::default();
        kv.inner.set(MARKER, b"1").unwrap();
        let journal = Journal::new(&kv);
        append(&journal, "c1", turn("user", "q")).unwrap();
        journal.defer("owner/c1", b"ada").unwrap();
        journal.defer("b", b"old").unwrap();
        journal.defer("gone", b"x").unwrap();
        assert!(kv.writes.borrow().is_empty(), "written before the flush");
        assert_eq!(*kv.increments.borrow(), ["conv/c1/count"], "the slot taken");
        // The turn reads what it wrote.
        assert_eq!(
            journal.get("owner/c1").unwrap().as_deref(),
            Some(&b"ada"[..])
        );
        assert_eq!(load(&journal, "c1").unwrap().turns, vec![turn("user", "q")]);
        // A write or delete now supersedes what was kept for the same key.
        journal.set("b", b"new").unwrap();
        journal.delete("gone").unwrap();
        journal.defer("owner/c1", b"ada2").unwrap();
        append(&journal, "c1", turn("assistant", "a")).unwrap();
        assert_eq!(kv.writes.borrow().len(), 1, "only the direct set went out");

        assert_eq!(journal.flush().unwrap(), 3);
        let writes = kv.writes.borrow().clone();
        assert_eq!(
            writes[1],
            [
                "conv/c1/t/000000000001",
                "owner/c1",
                "conv/c1/t/000000000002"
            ],
            "one batch, in the order written, the owner once"
        );
        assert_eq!(kv.get("b").unwrap().as_deref(), Some(&b"new"[..]));
        assert_eq!(kv.get("gone").unwrap(), None);
        assert_eq!(kv.get("owner/c1").unwrap().as_deref(), Some(&b"ada2"[..]));
        assert_eq!(load(&kv, "c1").unwrap().turns.len(), 2);
        assert_eq!(journal.flush().unwrap(), 0, "nothing is written twice");
        assert_eq!(kv.writes.borrow().len(), 2);
        assert_eq!(kv.listed.get(), 0, "the keys were listed");
    }

    #[test]
    fn turns_come_back_in_order_and_conversations_are_separate() {
        let kv = MemKv::indexed();
        append(&kv, "c1", turn("user", "hi")).unwrap();
        append(&kv, "c2", turn("user", "other")).unwrap();
        append(&kv, "c1", turn("assistant", "hello")).unwrap();
        save_summary(&kv, "c1", 0, "old stuff").unwrap();
        let c = load(&kv, "c1").unwrap();
        assert_eq!(contents(&c.turns), ["hi", "hello"]);
        assert_eq!(c.summary.as_deref(), Some("old stuff"));
        assert_eq!(delete(&kv, "c1").unwrap(), 3, "two turns and the summary");
        assert!(load(&kv, "c1").unwrap().turns.is_empty());
        assert_eq!(load(&kv, "c2").unwrap().turns.len(), 1);
        assert!(
            kv.all_keys().iter().all(|k| !k.starts_with("conv/c1/")),
            "{:?}",
            kv.all_keys()
        );
        assert_eq!(delete(&kv, "c1").unwrap(), 0, "nothing left");
        assert!(check_id("../x").is_err() && check_id("").is_err());
        assert_eq!(kv.1.get(), 0, "the keys were listed");
    }

    #[test]
    fn a_huge_turn_is_cut_to_fit_the_store() {
        let kv = MemKv::indexed();
        append(&kv, "c", turn("tool", &"é".repeat(MAX_TURN_BYTES))).unwrap();
        let c = load(&kv, "c").unwrap();
        assert!(c.turns[0].content.len() <= MAX_TURN_BYTES + 20);
        assert!(c.turns[0].content.ends_with("[truncated]"));
    }

    fn chat(i: usize) -> Turn {
        turn(
            if i.is_multiple_of(2) {
                "user"
            } else {
                "assistant"
            },
            &format!("m{i}"),
        )
    }

    #[test]
    fn the_window_reads_recent_turns_and_folds_the_rest_once() {
        let kv = WatchedKv::default();
        kv.inner.set(MARKER, b"1").unwrap();
        for i in 0..10 {
            append(&kv, "c", chat(i)).unwrap();
        }
        let w = load_window(&kv, "c", 4).unwrap();
        assert_eq!(contents(&w.recent), ["m6", "m7", "m8", "m9"]);
        assert_eq!(w.total, 10);
        let summary = w.summary.unwrap();
        assert!(
            summary.starts_with("User: m0\nAssistant: m1") && summary.ends_with("Assistant: m5"),
            "{summary}"
        );
        // Two more turns: only those that slid out are folded in.
        append(&kv, "c", chat(10)).unwrap();
        append(&kv, "c", chat(11)).unwrap();
        kv.read.borrow_mut().clear();
        let w = load_window(&kv, "c", 4).unwrap();
        let summary = w.summary.unwrap();
        assert!(summary.ends_with("User: m6\nAssistant: m7"), "{summary}");
        assert_eq!(summary.matches("m0").count(), 1);
        // The marker, the legacy record, the counter, the window's four slots, the
        // summary and the two slots folded: nothing else.
        let read = kv.read.borrow().clone();
        assert_eq!(read.len(), 10, "{read:?}");
        for slot in 7..=12 {
            assert!(read.contains(&format!("conv/c/t/{slot:012}")), "{read:?}");
        }
        let stored: Summary =
            serde_json::from_slice(&kv.get("conv/c/summary").unwrap().unwrap()).unwrap();
        assert_eq!(stored.through, 8);
        // Nothing new slid out: nothing is folded or written.
        let writes = kv.writes.borrow().len();
        load_window(&kv, "c", 4).unwrap();
        assert_eq!(kv.writes.borrow().len(), writes);
        assert_eq!(kv.listed.get(), 0);
    }

    #[test]
    fn the_summary_stays_bounded() {
        let long: Vec<Turn> = (0..500)
            .map(|i| turn("user", &format!("question {i} {}", "x".repeat(300))))
            .collect();
        let s = fold(None, &long);
        assert!(s.chars().count() <= MAX_SUMMARY_CHARS);
        assert!(s.contains("question 499"));
    }

    /// A slot taken by a request that died before its batch is skipped by every reader;
    /// the window reaches past it, and a long run of gaps is walked only so far.
    #[test]
    fn a_gap_is_skipped() {
        let kv = MemKv::indexed();
        append(&kv, "c", chat(0)).unwrap();
        kv.increment("conv/c/count", 1).unwrap(); // slot 2: lost
        append(&kv, "c", chat(2)).unwrap();
        append(&kv, "c", chat(3)).unwrap();
        kv.increment("conv/c/count", 1).unwrap(); // slot 5: lost
        assert_eq!(contents(&load(&kv, "c").unwrap().turns), ["m0", "m2", "m3"]);
        let w = load_window(&kv, "c", 2).unwrap();
        assert_eq!(contents(&w.recent), ["m2", "m3"]);
        assert_eq!(w.summary.as_deref(), Some("User: m0"));
        assert_eq!(w.total, 5, "positions, gaps included");
        let o = outline(&kv, "c").unwrap().unwrap();
        assert_eq!(
            (o.first.content.as_str(), o.newest.content.as_str()),
            ("m0", "m3")
        );

        // 40 lost slots at the end: a window of 2 reads at most 2·2 + 16 of them.
        kv.increment("conv/c/count", 40).unwrap();
        let w = load_window(&kv, "c", 2).unwrap();
        assert!(w.recent.is_empty());
        let stored: Summary =
            serde_json::from_slice(&kv.get("conv/c/summary").unwrap().unwrap()).unwrap();
        assert_eq!(stored.through, 45 - 20);
        assert_eq!(stored.text, "User: m0\nUser: m2\nAssistant: m3");
        // A first slot lost: the outline starts at the next turn.
        let kv = MemKv::indexed();
        kv.increment("conv/d/count", 1).unwrap();
        append(&kv, "d", chat(1)).unwrap();
        assert_eq!(outline(&kv, "d").unwrap().unwrap().first.content, "m1");
        assert_eq!(outline(&kv, "e").unwrap(), None);
    }

    /// Two turns of one conversation at once, on two instances: each takes its slots with
    /// the shared counter and writes them in its own batches, in any interleaving.
    #[test]
    fn interleaved_turns_keep_every_turn_in_slot_order() {
        let kv = MemKv::indexed();
        let a = Journal::new(&kv);
        let b = Journal::new(&kv);
        append(&a, "c", turn("user", "a question")).unwrap();
        append(&b, "c", turn("user", "b question")).unwrap();
        b.flush().unwrap();
        // a's question is not written yet: a reader skips its slot.
        assert_eq!(contents(&load(&kv, "c").unwrap().turns), ["b question"]);
        append(&b, "c", turn("assistant", "b answer")).unwrap();
        a.flush().unwrap();
        append(&a, "c", turn("assistant", "a answer")).unwrap();
        a.flush().unwrap();
        b.flush().unwrap();
        assert_eq!(
            contents(&load(&kv, "c").unwrap().turns),
            ["a question", "b question", "b answer", "a answer"]
        );
    }

    #[derive(Debug, Clone)]
    enum Step {
        /// Writer 0 or 1 appends a turn (a user turn when `true`).
        Append(u8, bool, String),
        /// Writer 0 or 1 writes what it kept.
        Flush(u8),
        /// A request reads the window.
        Window,
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            3 => (0u8..2, any::<bool>(), "[a-z ]{0,12}").prop_map(|(w, u, t)| Step::Append(w, u, t)),
            2 => (0u8..2).prop_map(Step::Flush),
            2 => Just(Step::Window),
        ]
    }

    proptest! {
        /// Appends and window loads in any order, by two interleaved writers: the window is
        /// the newest written turns in slot order, its summary the fold of all the written
        /// turns before them, and at the end every turn is there once, as in a plain list.
        #[test]
        fn windows_match_a_plain_list(recent in 0usize..6, steps in proptest::collection::vec(step(), 0..60)) {
            let kv = MemKv::indexed();
            let writers = [Journal::new(&kv), Journal::new(&kv)];
            // The reference: every slot taken, in order, and whether it was written yet.
            let mut slots: Vec<(Turn, bool, u8)> = Vec::new();
            for s in &steps {
                match s {
                    Step::Append(w, user, text) => {
                        let t = turn(if *user { "user" } else { "assistant" }, text);
                        append(&writers[*w as usize], "c", t.clone()).unwrap();
                        slots.push((t, false, *w));
                    }
                    Step::Flush(w) => {
                        writers[*w as usize].flush().unwrap();
                        for slot in slots.iter_mut().filter(|s| s.2 == *w) {
                            slot.1 = true;
                        }
                    }
                    Step::Window => {
                        let w = load_window(&kv, "c", recent).unwrap();
                        prop_assert_eq!(w.total, slots.len());
                        // Slots not written yet are gaps, skipped; the walk back reaches
                        // past at least 16 of them.
                        let written: Vec<Turn> = slots.iter().filter(|s| s.1).map(|s| s.0.clone()).collect();
                        if slots.iter().filter(|s| !s.1).count() <= 16 {
                            let split = written.len().saturating_sub(recent);
                            prop_assert_eq!(&w.recent[..], &written[split..]);
                        }
                    }
                }
            }
            for w in &writers {
                w.flush().unwrap();
            }
            let all: Vec<Turn> = slots.iter().map(|s| s.0.clone()).collect();
            prop_assert_eq!(load(&kv, "c").unwrap().turns, all.clone());
            let w = load_window(&kv, "c", recent).unwrap();
            let split = all.len().saturating_sub(recent);
            prop_assert_eq!(&w.recent[..], &all[split..]);
        }

        /// One writer, every write landed before the next read (the usual conversation):
        /// window and summary are exactly a plain list's newest turns and the fold of the
        /// rest, however the reads fall.
        #[test]
        fn one_writer_windows_and_folds_match_a_plain_list(recent in 0usize..6, steps in proptest::collection::vec((any::<bool>(), "[a-z ]{0,12}", any::<bool>()), 0..60)) {
            let kv = MemKv::indexed();
            let mut all = Vec::new();
            for (user, text, read) in &steps {
                let t = turn(if *user { "user" } else { "tool" }, text);
                append(&kv, "c", t.clone()).unwrap();
                all.push(t);
                if *read {
                    let w = load_window(&kv, "c", recent).unwrap();
                    let split = all.len().saturating_sub(recent);
                    prop_assert_eq!(&w.recent[..], &all[split..]);
                    prop_assert_eq!(w.summary, (split > 0).then(|| fold(None, &all[..split])));
                }
            }
            prop_assert_eq!(kv.1.get(), 0);
        }
    }

    /// Written by an earlier version: one key per turn named by time, running summaries
    /// named after the last turn they cover, the owner.
    fn legacy_conversation(kv: &dyn Kv, id: &str, owner: &str, turns: &[(&str, &str)]) {
        for (suffix, content) in turns {
            let t = Turn {
                at: format!("2025-01-01T00:00:{}Z", &suffix[..2]),
                ..turn("user", content)
            };
            kv.set(
                &format!("conv/{id}/turn/{suffix}"),
                &serde_json::to_vec(&t).unwrap(),
            )
            .unwrap();
        }
        kv.set(&format!("owner/{id}"), owner.as_bytes()).unwrap();
    }

    #[test]
    fn a_legacy_conversation_is_read_continued_and_deleted_after_the_migration() {
        let kv = MemKv::default();
        legacy_conversation(
            &kv,
            "old",
            "ann",
            &[
                ("10-a", "q1"),
                ("20-a", "q2"),
                ("30-a", "q3"),
                ("40-a", "q4"),
            ],
        );
        // Two summaries, the older one not yet cleaned up: the newest covers 10 and 20.
        kv.set("conv/old/summary/10-a", b"User: q1").unwrap();
        kv.set("conv/old/summary/20-a", b"User: q1\nUser: q2")
            .unwrap();
        kv.set("conv/old/bookmarks", b"[\"b1\"]").unwrap();
        legacy_conversation(&kv, "other", "bob", &[("15-a", "elsewhere")]);

        // The first read migrates (one listing), the next ones do not list.
        let w = load_window(&kv, "old", 1).unwrap();
        assert_eq!(kv.1.get(), 1);
        assert!(kv.get(MARKER).unwrap().is_some());
        assert_eq!(contents(&w.recent), ["q4"]);
        assert_eq!(w.summary.as_deref(), Some("User: q1\nUser: q2\nUser: q3"));
        assert_eq!(w.total, 4);

        // Continued: the new turns follow the legacy ones.
        append(&kv, "old", turn("assistant", "a4")).unwrap();
        append(&kv, "old", turn("user", "q5")).unwrap();
        let c = load(&kv, "old").unwrap();
        assert_eq!(contents(&c.turns), ["q1", "q2", "q3", "q4", "a4", "q5"]);
        assert_eq!(c.summary.as_deref(), Some("User: q1\nUser: q2\nUser: q3"));
        let w = load_window(&kv, "old", 2).unwrap();
        assert_eq!(contents(&w.recent), ["a4", "q5"]);
        assert_eq!(
            w.summary.as_deref(),
            Some("User: q1\nUser: q2\nUser: q3\nUser: q4")
        );
        let o = outline(&kv, "old").unwrap().unwrap();
        assert_eq!(
            (o.first.content.as_str(), o.newest.content.as_str(), o.turns),
            ("q1", "q5", 6)
        );

        // Deleted: 6 turns, 2 legacy summaries, the summary and the bookmarks.
        assert_eq!(delete(&kv, "old").unwrap(), 10);
        assert!(
            kv.all_keys().iter().all(|k| !k.starts_with("conv/old/")),
            "{:?}",
            kv.all_keys()
        );
        assert_eq!(contents(&load(&kv, "other").unwrap().turns), ["elsewhere"]);
        assert_eq!(kv.1.get(), 1, "listed once, by the migration");
    }

    #[test]
    fn migrations_at_once_write_the_same_and_a_second_changes_nothing() {
        let kv = MemKv::default();
        legacy_conversation(&kv, "c1", "ann", &[("10-a", "q1"), ("20-a", "q2")]);
        legacy_conversation(&kv, "c2", "ann", &[("11-a", "x")]);
        legacy_conversation(&kv, "c3", "bob", &[("12-a", "y")]);
        kv.set("owner/c4", b"bob").unwrap(); // claimed, no turn yet
        kv.set("conv/c2/summary/11-a", b"User: x").unwrap();
        // Two instances both list the keys before either sets the marker.
        let a = Journal::new(&kv);
        let b = Journal::new(&kv);
        let first = migrate(&a).unwrap();
        let snapshot = kv.0.borrow().clone();
        let second = migrate(&b).unwrap();
        assert_eq!(first, second);
        assert_eq!(
            first,
            crate::legacy::Migrated {
                conversations: 3,
                subjects: 2
            }
        );
        assert_eq!(*kv.0.borrow(), snapshot);
        assert_eq!(
            crate::legacy::of_conversation(&kv, "c2").unwrap(),
            crate::legacy::Legacy {
                turns: vec!["11-a".into()],
                summaries: vec!["11-a".into()]
            }
        );
        assert_eq!(crate::legacy::of_subject(&kv, "bob").unwrap(), ["c3", "c4"]);
    }

    #[test]
    fn counters_are_read_as_every_store_keeps_them() {
        // Redis: decimal text, read with a plain get.
        let kv = TextCounters::default();
        kv.set(MARKER, b"1").unwrap();
        for i in 0..12 {
            append(&kv, "c", chat(i)).unwrap();
        }
        assert_eq!(kv.get("conv/c/count").unwrap().as_deref(), Some(&b"12"[..]));
        let w = load_window(&kv, "c", 3).unwrap();
        assert_eq!(contents(&w.recent), ["m9", "m10", "m11"]);
        assert_eq!(w.total, 12);
        assert_eq!(kv.zero_increments.get(), 0);
        // A form nobody decodes: the store's own increment by 0 reads it.
        let kv = TextCounters {
            odd: true,
            ..TextCounters::default()
        };
        kv.set(MARKER, b"1").unwrap();
        for i in 0..3 {
            append(&kv, "c", chat(i)).unwrap();
        }
        assert_eq!(load(&kv, "c").unwrap().turns.len(), 3);
        assert_eq!(kv.zero_increments.get(), 1);
        // SQLite (and the default increment): 8 bytes little-endian.
        let kv = MemKv::default();
        kv.increment("n", 1_000_000).unwrap();
        assert_eq!(counter(&kv, "n").unwrap(), 1_000_000);
        kv.set("t", b"12345678").unwrap();
        assert_eq!(counter(&kv, "t").unwrap(), 12_345_678, "8 digits are text");
        assert_eq!(counter(&kv, "absent").unwrap(), 0);
    }

    #[test]
    fn bookmarks_of_concurrent_turns_are_kept_side_by_side() {
        let kv = MemKv::indexed();
        let v = |x: &[&str]| x.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(load_bookmarks(&kv, "c1").unwrap().is_empty());
        save_bookmarks(&kv, "c1", &[], &v(&["b1"])).unwrap();
        // Two turns start from b1; one ends with b2, the other with b3.
        save_bookmarks(&kv, "c1", &v(&["b1"]), &v(&["b2"])).unwrap();
        save_bookmarks(&kv, "c1", &v(&["b1"]), &v(&["b3"])).unwrap();
        assert_eq!(load_bookmarks(&kv, "c1").unwrap(), v(&["b2", "b3"]));
        // The next turn read both and wrote b4.
        save_bookmarks(&kv, "c1", &v(&["b2", "b3"]), &v(&["b4"])).unwrap();
        assert_eq!(load_bookmarks(&kv, "c1").unwrap(), v(&["b4"]));
        // A turn that wrote nothing stores nothing; other conversations are untouched.
        save_bookmarks(&kv, "c1", &v(&["b4"]), &v(&["b4"])).unwrap();
        assert!(load_bookmarks(&kv, "c2").unwrap().is_empty());
        // Kept with the conversation (deleted with it) and ignored by the turn loader.
        assert!(load(&kv, "c1").unwrap().turns.is_empty());
        assert_eq!(delete(&kv, "c1").unwrap(), 1);
        assert!(load_bookmarks(&kv, "c1").unwrap().is_empty());
    }

    #[test]
    fn at_most_max_bookmarks_are_kept_newest_last() {
        let kv = MemKv::default();
        for i in 0..40 {
            save_bookmarks(&kv, "c1", &[], &[format!("b{i}")]).unwrap();
        }
        let kept = load_bookmarks(&kv, "c1").unwrap();
        assert_eq!(kept.len(), MAX_BOOKMARKS);
        assert_eq!(kept.last().map(String::as_str), Some("b39"));
    }
}
