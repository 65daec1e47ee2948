//! Conversations written before the indexed layout ([`crate::memory`], [`crate::ownership`]):
//! one key per turn named by time (`conv/<id>/turn/<micros>-<random>`), running summaries
//! named after the last turn they covered (`conv/<id>/summary/<suffix>`), and no index of
//! a subject's conversations (only `owner/<id>`), so that reading any of them listed every
//! key of the store.
//!
//! Once per store, the first request that reads memory and does not find the marker
//! [`MARKER`] lists the keys ([`migrate`]) and writes, for every conversation with legacy
//! keys, `conv/<id>/legacy` (its turn and summary suffixes, in key order), and for every
//! subject owning a conversation, `subj/<hash>/legacy` (those conversations' ids), then the
//! marker. From then on no request lists the keys. Nothing is moved or rewritten: legacy
//! turns stay where they are, and a conversation reads them first, then its slots.
//!
//! Instances that find the marker missing at the same time each migrate, with no claim:
//! what they write is a function of keys that no longer change (this version never writes
//! a legacy key; a subject's list may differ by a conversation claimed meanwhile, which is
//! in the subject's index anyway, and readers drop duplicates), so their writes agree. Not
//! covered: an instance of an earlier version still writing after the marker was set (a
//! rolling upgrade); its later turns stay in the store but are not read.

use crate::memory::{Kv, check_id};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Present once the store's legacy conversations are indexed.
pub const MARKER: &str = "memory/indexed";

/// Most entries one migration batch writes ([`Kv::set_many`]).
const BATCH: usize = 256;

/// A legacy conversation's keys, by suffix, in key (time) order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Legacy {
    pub turns: Vec<String>,
    #[serde(default)]
    pub summaries: Vec<String>,
}

pub fn record_key(conversation: &str) -> String {
    format!("conv/{conversation}/legacy")
}

pub fn turn_key(conversation: &str, suffix: &str) -> String {
    format!("conv/{conversation}/turn/{suffix}")
}

pub fn summary_key(conversation: &str, suffix: &str) -> String {
    format!("conv/{conversation}/summary/{suffix}")
}

/// The conversation's legacy keys (none for one begun since the indexed layout). One read.
pub fn of_conversation(kv: &dyn Kv, conversation: &str) -> Result<Legacy, String> {
    Ok(kv
        .get(&record_key(conversation))?
        .and_then(|v| serde_json::from_slice(&v).ok())
        .unwrap_or_default())
}

/// The conversations `subject` owned before the indexed layout. One read.
pub fn of_subject(kv: &dyn Kv, subject: &str) -> Result<Vec<String>, String> {
    Ok(kv
        .get(&crate::ownership::subject_legacy_key(subject))?
        .and_then(|v| serde_json::from_slice(&v).ok())
        .unwrap_or_default())
}

/// Migrates the store unless [`MARKER`] says it was: one read on every request after that.
pub fn ensure_indexed(kv: &dyn Kv) -> Result<(), String> {
    if kv.get(MARKER)?.is_none() {
        migrate(kv)?;
    }
    Ok(())
}

/// What a migration wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Migrated {
    pub conversations: usize,
    pub subjects: usize,
}

/// Lists the store's keys once and indexes its legacy conversations and their owners (see
/// the module's documentation), then sets [`MARKER`].
pub fn migrate(kv: &dyn Kv) -> Result<Migrated, String> {
    let mut conversations: BTreeMap<String, Legacy> = BTreeMap::new();
    let mut owned = Vec::new();
    for key in kv.keys()? {
        if let Some(id) = key.strip_prefix("owner/") {
            if check_id(id).is_ok() {
                owned.push(id.to_string());
            }
        } else if let Some(rest) = key.strip_prefix("conv/")
            && let Some((id, tail)) = rest.split_once('/')
            && check_id(id).is_ok()
        {
            if let Some(suffix) = tail.strip_prefix("turn/") {
                let legacy = conversations.entry(id.to_string()).or_default();
                legacy.turns.push(suffix.to_string());
            } else if let Some(suffix) = tail.strip_prefix("summary/") {
                let legacy = conversations.entry(id.to_string()).or_default();
                legacy.summaries.push(suffix.to_string());
            }
        }
    }
    let mut entries = Vec::new();
    for (id, mut legacy) in conversations {
        legacy.turns.sort();
        legacy.summaries.sort();
        let value = serde_json::to_vec(&legacy).map_err(|e| e.to_string())?;
        entries.push((record_key(&id), value));
    }
    let migrated_conversations = entries.len();
    owned.sort();
    let mut subjects: BTreeMap<Vec<u8>, Vec<String>> = BTreeMap::new();
    for id in owned {
        if let Some(subject) = kv.get(&format!("owner/{id}"))? {
            subjects.entry(subject).or_default().push(id);
        }
    }
    let migrated_subjects = subjects.len();
    for (subject, ids) in subjects {
        let value = serde_json::to_vec(&ids).map_err(|e| e.to_string())?;
        entries.push((crate::ownership::subject_legacy_key_of(&subject), value));
    }
    for chunk in entries.chunks(BATCH) {
        kv.set_many(chunk)?;
    }
    kv.set(MARKER, b"1")?;
    Ok(Migrated {
        conversations: migrated_conversations,
        subjects: migrated_subjects,
    })
}
