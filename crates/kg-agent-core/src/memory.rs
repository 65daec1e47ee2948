//! Conversation memory in a key-value store (Spin KV: values ≤ 1 MB, no compare-and-swap).
//!
//! Layout, one conversation `c`:
//! - `conv/c/turn/<micros:016>-<random:016x>`: one turn per key, never rewritten (keys
//!   written by earlier versions carry milliseconds, `<millis:013>-…`, and still sort);
//! - `conv/c/summary/<suffix of the last turn covered>`: running summaries of older turns, the
//!   newest wins.
//!
//! Two concurrent requests on one conversation write different keys, so neither can lose
//! the other's turn (there is no read-modify-write of a shared list); reading lists the
//! conversation's keys and sorts them, which orders turns by time. No value grows: a turn
//! is capped at [`MAX_TURN_BYTES`], a summary at [`MAX_SUMMARY_CHARS`].
//!
//! A request reads only the recent window of turns and the newest summary
//! ([`load_window`]); turns that slid out of the window since that summary was written are
//! folded into a new summary (named after the last turn it covers), so the work per request
//! stays bounded however long the conversation gets. Two requests folding at once write
//! summaries under different names; the newest covering one wins, and nothing is lost
//! because turns themselves are never deleted.

use serde::{Deserialize, Serialize};

/// The store as the memory needs it.
pub trait Kv {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, String>;
    fn set(&self, key: &str, value: &[u8]) -> Result<(), String>;
    fn delete(&self, key: &str) -> Result<(), String>;
    /// Every key of the store (Spin KV offers no prefix listing).
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

/// Stores a turn under a fresh key; `unique` is the caller's `<micros>-<random>` suffix.
pub fn append(
    kv: &dyn Kv,
    conversation: &str,
    mut turn: Turn,
    unique: &str,
) -> Result<String, String> {
    check_id(conversation)?;
    if turn.content.len() > MAX_TURN_BYTES {
        let mut cut = MAX_TURN_BYTES;
        while !turn.content.is_char_boundary(cut) {
            cut -= 1;
        }
        turn.content.truncate(cut);
        turn.content.push_str(" …[truncated]");
    }
    let key = format!("{}turn/{unique}", prefix(conversation));
    let value = serde_json::to_vec(&turn).map_err(|e| e.to_string())?;
    kv.defer(&key, &value)?;
    Ok(key)
}

/// Stores a running summary of the turns before `unique`.
pub fn save_summary(
    kv: &dyn Kv,
    conversation: &str,
    summary: &str,
    unique: &str,
) -> Result<(), String> {
    check_id(conversation)?;
    let cut: String = summary.chars().take(MAX_TURN_BYTES / 4).collect();
    kv.set(
        &format!("{}summary/{unique}", prefix(conversation)),
        cut.as_bytes(),
    )
}

/// The conversation's turns in time order and its newest summary. A turn that does not
/// decode (written by a future version, or corrupted) is skipped, not fatal.
pub fn load(kv: &dyn Kv, conversation: &str) -> Result<Conversation, String> {
    check_id(conversation)?;
    let prefix = prefix(conversation);
    let mut keys: Vec<String> = kv
        .keys()?
        .into_iter()
        .filter(|k| k.starts_with(&prefix))
        .collect();
    keys.sort();
    let mut out = Conversation::default();
    for key in keys {
        let rest = &key[prefix.len()..];
        let Some(value) = kv.get(&key)? else { continue };
        if rest.starts_with("turn/") {
            if let Ok(turn) = serde_json::from_slice::<Turn>(&value) {
                out.turns.push(turn);
            }
        } else if rest.starts_with("summary/") {
            out.summary = Some(String::from_utf8_lossy(&value).into_owned());
        }
    }
    Ok(out)
}

/// Deletes every key of the conversation; returns how many there were.
pub fn delete(kv: &dyn Kv, conversation: &str) -> Result<usize, String> {
    check_id(conversation)?;
    let prefix = prefix(conversation);
    let keys: Vec<String> = kv
        .keys()?
        .into_iter()
        .filter(|k| k.starts_with(&prefix))
        .collect();
    for key in &keys {
        kv.delete(key)?;
    }
    Ok(keys.len())
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
    /// Turns in the conversation.
    pub total: usize,
}

/// The recent `recent` turns and a summary of all older ones, updating the summary when
/// turns have slid out of the window since it was written.
pub fn load_window(kv: &dyn Kv, conversation: &str, recent: usize) -> Result<Window, String> {
    check_id(conversation)?;
    let prefix = prefix(conversation);
    let mut turn_keys = Vec::new();
    let mut summary_keys = Vec::new();
    for key in kv.keys()? {
        if let Some(rest) = key.strip_prefix(&prefix) {
            if let Some(suffix) = rest.strip_prefix("turn/") {
                turn_keys.push(suffix.to_string());
            } else if let Some(suffix) = rest.strip_prefix("summary/") {
                summary_keys.push(suffix.to_string());
            }
        }
    }
    turn_keys.sort();
    summary_keys.sort();
    let read_turn = |suffix: &str| -> Result<Option<Turn>, String> {
        Ok(kv
            .get(&format!("{prefix}turn/{suffix}"))?
            .and_then(|v| serde_json::from_slice::<Turn>(&v).ok()))
    };
    let split = turn_keys.len().saturating_sub(recent);
    let (older, newer) = turn_keys.split_at(split);
    let covered = summary_keys.last().cloned();
    let mut summary = match &covered {
        Some(suffix) => kv
            .get(&format!("{prefix}summary/{suffix}"))?
            .map(|v| String::from_utf8_lossy(&v).into_owned()),
        None => None,
    };
    let uncovered: Vec<&String> = older
        .iter()
        .filter(|k| covered.as_ref().is_none_or(|c| *k > c))
        .collect();
    if let Some(last) = uncovered.last() {
        let mut folded = Vec::new();
        for suffix in &uncovered {
            if let Some(turn) = read_turn(suffix)? {
                folded.push(turn);
            }
        }
        let text = fold(summary.as_deref(), &folded);
        kv.set(&format!("{prefix}summary/{last}"), text.as_bytes())?;
        // Older summaries are superseded (a failure to delete one only wastes space).
        for old in &summary_keys {
            let _ = kv.delete(&format!("{prefix}summary/{old}"));
        }
        summary = Some(text);
    }
    let mut turns = Vec::new();
    for suffix in newer {
        if let Some(turn) = read_turn(suffix)? {
            turns.push(turn);
        }
    }
    Ok(Window {
        recent: turns,
        summary,
        total: turn_keys.len(),
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
    use proptest::prelude::*;
    use std::cell::RefCell;
    use std::collections::BTreeMap;

    #[derive(Default)]
    pub struct MemKv(pub RefCell<BTreeMap<String, Vec<u8>>>);

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
            Ok(self.0.borrow().keys().cloned().collect())
        }
    }

    /// A [`MemKv`] that records the keys read, how often the keys were listed and each
    /// write (the keys of one `set`, or of one `set_many`), for tests of how sparingly
    /// the store is used.
    #[derive(Default)]
    pub struct WatchedKv {
        inner: MemKv,
        pub read: RefCell<Vec<String>>,
        pub listed: std::cell::Cell<usize>,
        pub writes: RefCell<Vec<Vec<String>>>,
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
    }

    #[test]
    fn a_journal_keeps_deferred_writes_until_its_flush_and_reads_them_meanwhile() {
        let kv = WatchedKv::default();
        let journal = Journal::new(&kv);
        append(&journal, "c1", turn("user", "q"), "0001").unwrap();
        journal.defer("owner/c1", b"ada").unwrap();
        journal.defer("b", b"old").unwrap();
        journal.defer("gone", b"x").unwrap();
        assert!(kv.writes.borrow().is_empty(), "written before the flush");
        // The turn reads what it wrote, and lists it.
        assert_eq!(
            journal.get("owner/c1").unwrap().as_deref(),
            Some(&b"ada"[..])
        );
        assert_eq!(load(&journal, "c1").unwrap().turns, vec![turn("user", "q")]);
        // A write or delete now supersedes what was kept for the same key.
        journal.set("b", b"new").unwrap();
        journal.delete("gone").unwrap();
        journal.defer("owner/c1", b"ada2").unwrap();
        append(&journal, "c1", turn("assistant", "a"), "0002").unwrap();
        assert_eq!(kv.writes.borrow().len(), 1, "only the direct set went out");

        assert_eq!(journal.flush().unwrap(), 3);
        let writes = kv.writes.borrow().clone();
        assert_eq!(
            writes[1],
            ["conv/c1/turn/0001", "owner/c1", "conv/c1/turn/0002"],
            "one batch, in the order written, the owner once"
        );
        assert_eq!(kv.get("b").unwrap().as_deref(), Some(&b"new"[..]));
        assert_eq!(kv.get("gone").unwrap(), None);
        assert_eq!(kv.get("owner/c1").unwrap().as_deref(), Some(&b"ada2"[..]));
        assert_eq!(load(&kv, "c1").unwrap().turns.len(), 2);
        assert_eq!(journal.flush().unwrap(), 0, "nothing is written twice");
        assert_eq!(kv.writes.borrow().len(), 2);
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

    #[test]
    fn turns_come_back_in_order_and_conversations_are_separate() {
        let kv = MemKv::default();
        append(&kv, "c1", turn("user", "hi"), "0000000000001-a").unwrap();
        append(&kv, "c2", turn("user", "other"), "0000000000001-b").unwrap();
        append(&kv, "c1", turn("assistant", "hello"), "0000000000002-a").unwrap();
        save_summary(&kv, "c1", "old stuff", "0000000000002-b").unwrap();
        let c = load(&kv, "c1").unwrap();
        let contents: Vec<&str> = c.turns.iter().map(|t| t.content.as_str()).collect();
        assert_eq!(contents, ["hi", "hello"]);
        assert_eq!(c.summary.as_deref(), Some("old stuff"));
        assert_eq!(delete(&kv, "c1").unwrap(), 3);
        assert!(load(&kv, "c1").unwrap().turns.is_empty());
        assert_eq!(load(&kv, "c2").unwrap().turns.len(), 1);
        assert!(check_id("../x").is_err() && check_id("").is_err());
    }

    #[test]
    fn a_huge_turn_is_cut_to_fit_the_store() {
        let kv = MemKv::default();
        append(&kv, "c", turn("tool", &"é".repeat(MAX_TURN_BYTES)), "1-a").unwrap();
        let c = load(&kv, "c").unwrap();
        assert!(c.turns[0].content.len() <= MAX_TURN_BYTES + 20);
        assert!(c.turns[0].content.ends_with("[truncated]"));
    }

    #[test]
    fn the_window_reads_recent_turns_and_folds_the_rest_once() {
        let kv = MemKv::default();
        for i in 0..10 {
            append(
                &kv,
                "c",
                turn(
                    if i % 2 == 0 { "user" } else { "assistant" },
                    &format!("m{i}"),
                ),
                &format!("{i:013}-a"),
            )
            .unwrap();
        }
        let w = load_window(&kv, "c", 4).unwrap();
        let recent: Vec<&str> = w.recent.iter().map(|t| t.content.as_str()).collect();
        assert_eq!(recent, ["m6", "m7", "m8", "m9"]);
        assert_eq!(w.total, 10);
        let summary = w.summary.unwrap();
        assert!(
            summary.starts_with("User: m0\nAssistant: m1") && summary.ends_with("Assistant: m5"),
            "{summary}"
        );
        // Two more turns: only those that slid out are folded in; one summary remains.
        append(&kv, "c", turn("user", "m10"), "0000000000010-a").unwrap();
        append(&kv, "c", turn("assistant", "m11"), "0000000000011-a").unwrap();
        let w = load_window(&kv, "c", 4).unwrap();
        let summary = w.summary.unwrap();
        assert!(summary.ends_with("User: m6\nAssistant: m7"), "{summary}");
        assert_eq!(summary.matches("m0").count(), 1);
        let summaries = kv
            .keys()
            .unwrap()
            .iter()
            .filter(|k| k.contains("/summary/"))
            .count();
        assert_eq!(summaries, 1);
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

    proptest! {
        /// Interleaved writers never lose a turn: every appended turn is read back once.
        #[test]
        fn interleaved_appends_lose_nothing(writers in proptest::collection::vec((0u8..3, "[a-z]{0,8}"), 0..40)) {
            let kv = MemKv::default();
            for (i, (writer, text)) in writers.iter().enumerate() {
                append(&kv, "c", turn("user", &format!("{writer}:{text}")), &format!("{:013}-{i:016x}", i / 2)).unwrap();
            }
            let c = load(&kv, "c").unwrap();
            prop_assert_eq!(c.turns.len(), writers.len());
        }
    }

    #[test]
    fn bookmarks_of_concurrent_turns_are_kept_side_by_side() {
        let kv = MemKv::default();
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
