//! Conversations belong to the subject that started them (DESIGN.md §9). Someone else's
//! conversation is answered like one that does not exist (404), so ids leak nothing;
//! admins may read and delete any. The owner is kept beside the turns, under its own key
//! (`owner/<id>`), so deleting a conversation's turns never touches it.
//!
//! Each subject has an index of the conversations it claimed, appended to as it claims
//! them: `subj/<h>/count`, an atomic counter, and `subj/<h>/c/<n:012>` = the id claimed
//! `n`-th, where `<h>` is the SHA-256 of the subject in hex (subjects are arbitrary
//! strings; this keeps keys short and safe). Conversations claimed before the index are
//! listed in `subj/<h>/legacy` ([`crate::legacy`]). An entry is never removed: a deleted
//! or re-claimed conversation drops out of the listing because its owner is no longer the
//! subject.

use crate::memory::{self, Kv, check_id};

fn key(conversation: &str) -> String {
    format!("owner/{conversation}")
}

fn subject_prefix_of(subject: &[u8]) -> String {
    format!("subj/{}", kg_actions::approval::sha256_hex(subject))
}

fn subject_count_key(subject: &str) -> String {
    format!("{}/count", subject_prefix_of(subject.as_bytes()))
}

fn subject_entry_key(subject: &str, n: i64) -> String {
    format!("{}/c/{n:012}", subject_prefix_of(subject.as_bytes()))
}

/// The key of the conversations `subject` owned before the index.
pub fn subject_legacy_key(subject: &str) -> String {
    subject_legacy_key_of(subject.as_bytes())
}

/// [`subject_legacy_key`] of a subject as `owner/<id>` holds it.
pub fn subject_legacy_key_of(subject: &[u8]) -> String {
    format!("{}/legacy", subject_prefix_of(subject))
}

/// The owner's record and the entry of the subject's index for a conversation it claims:
/// one atomic increment takes the entry's number, the two writes are left to the caller
/// (together, so an owned conversation is always in its owner's index, but for a request
/// that died in between).
fn owner_entries(
    kv: &dyn Kv,
    conversation: &str,
    subject: &str,
) -> Result<[(String, Vec<u8>); 2], String> {
    let n = kv.increment(&subject_count_key(subject), 1)?;
    Ok([
        (key(conversation), subject.as_bytes().to_vec()),
        (
            subject_entry_key(subject, n),
            conversation.as_bytes().to_vec(),
        ),
    ])
}

/// The counter that decides who claims a client-named id first.
fn claim_key(conversation: &str) -> String {
    format!("claim/{conversation}")
}

/// Why access was refused: the caller may not know the conversation exists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    NotFound,
    Store(String),
}

/// May `subject` use `conversation`? `start` claims an unowned id for the subject (a new
/// conversation, [`claim`]); otherwise an unowned id is not found for anyone but an admin.
pub fn authorize(
    kv: &dyn Kv,
    conversation: &str,
    subject: &str,
    admin: bool,
    start: bool,
) -> Result<(), Refused> {
    check_id(conversation).map_err(|_| Refused::NotFound)?;
    match kv.get(&key(conversation)).map_err(Refused::Store)? {
        Some(owner) if owner == subject.as_bytes() => Ok(()),
        Some(_) if admin => Ok(()),
        Some(_) => Err(Refused::NotFound),
        None if start => claim(kv, conversation, subject, admin),
        None if admin => Ok(()),
        None => Err(Refused::NotFound),
    }
}

/// Claims an unowned id a client named. One atomic increment of `claim/<id>` decides who
/// was first, on every instance sharing the store: the first records itself as the owner
/// at once. A read then a write, as before, let two subjects starting their first turns
/// at once both claim it, and one's turns then landed in the other's conversation. Anyone
/// after the first finds the owner it recorded; in the moment before that write lands the
/// id is not found (an admin may still use it), so a subject that sends its first turn
/// twice at the same instant may see one refused, and can retry. (The owner is written at
/// once, not with the question ([`Kv::defer`]), to keep that moment short; with it, in the
/// same batch, the conversation's entry in the subject's index.)
fn claim(kv: &dyn Kv, conversation: &str, subject: &str, admin: bool) -> Result<(), Refused> {
    if kv
        .increment(&claim_key(conversation), 1)
        .map_err(Refused::Store)?
        == 1
    {
        let entries = owner_entries(kv, conversation, subject).map_err(Refused::Store)?;
        return kv.set_many(&entries).map_err(Refused::Store);
    }
    // Someone was first: the rules for an id that is not being started.
    authorize(kv, conversation, subject, admin, false)
}

/// Records `subject` as the owner of a conversation the turn has just named
/// (`kg_spin::clock::unique_id`: 64 random bits, so nobody else can have claimed it): no
/// read, the increment of the subject's index, and the two writes may leave with the
/// turn's first turns ([`Kv::defer`]).
pub fn claim_new(kv: &dyn Kv, conversation: &str, subject: &str) -> Result<(), String> {
    check_id(conversation)?;
    for (k, v) in owner_entries(kv, conversation, subject)? {
        kv.defer(&k, &v)?;
    }
    Ok(())
}

/// Forgets the owner with the conversation (and its claim, so the id may be used again).
pub fn forget(kv: &dyn Kv, conversation: &str) -> Result<(), String> {
    kv.delete(&key(conversation))?;
    kv.delete(&claim_key(conversation))
}

/// One of a subject's conversations, as `GET /conversations` lists it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Listed {
    pub id: String,
    /// The first turn (the question that started it), cut to [`TITLE_CHARS`].
    pub title: String,
    /// When its newest turn was written (RFC 3339).
    pub updated: String,
    pub turns: usize,
}

/// Longest title listed (characters).
pub const TITLE_CHARS: usize = 80;
/// Most conversations listed, newest first.
pub const MAX_LISTED: usize = 200;

/// The conversations `subject` owns (its own only, admins included), most recently updated
/// first, at most [`MAX_LISTED`]. Reads the subject's index (its legacy list and each
/// entry), then for each conversation in it its owner and its outline
/// ([`memory::outline`]: first and newest turns); one no longer the subject's (deleted, or
/// claimed again by someone else) or without turns yet is left out, as
/// `GET /conversations/{id}` answers it 404. The cost grows with the conversations the
/// subject ever claimed, not with the store.
pub fn list_owned(kv: &dyn Kv, subject: &str) -> Result<Vec<Listed>, String> {
    crate::legacy::ensure_indexed(kv)?;
    let mut ids = crate::legacy::of_subject(kv, subject)?;
    let count = memory::counter(kv, &subject_count_key(subject))?;
    for n in 1..=i64::try_from(count).unwrap_or(i64::MAX) {
        // A gap: the claiming request died before its batch (or has not written it yet).
        if let Some(id) = kv.get(&subject_entry_key(subject, n))? {
            ids.push(String::from_utf8_lossy(&id).into_owned());
        }
    }
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for id in ids {
        if !seen.insert(id.clone())
            || check_id(&id).is_err()
            || kv.get(&key(&id))?.as_deref() != Some(subject.as_bytes())
        {
            continue;
        }
        let Some(outline) = memory::outline(kv, &id)? else {
            continue;
        };
        out.push(Listed {
            title: outline.first.content.chars().take(TITLE_CHARS).collect(),
            updated: outline.newest.at,
            turns: outline.turns,
            id,
        });
    }
    out.sort_by(|a, b| b.updated.cmp(&a.updated).then_with(|| a.id.cmp(&b.id)));
    out.truncate(MAX_LISTED);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::Turn;
    use crate::memory::tests::MemKv;

    fn say(kv: &dyn Kv, conversation: &str, role: &str, content: &str, at: &str) {
        let turn = Turn {
            role: role.into(),
            content: content.into(),
            name: None,
            at: at.into(),
            route: None,
        };
        memory::append(kv, conversation, turn).unwrap();
    }

    #[test]
    fn lists_only_the_subjects_own_conversations_newest_first() {
        let kv = MemKv::indexed();
        for (id, who) in [("c1", "ann"), ("c2", "ann"), ("c3", "bob"), ("c4", "ann")] {
            authorize(&kv, id, who, false, true).unwrap();
        }
        say(
            &kv,
            "c1",
            "user",
            "Who supplies ACME?",
            "2026-01-01T10:00:00Z",
        );
        say(&kv, "c1", "assistant", "SUP-001.", "2026-01-01T10:00:05Z");
        say(
            &kv,
            "c2",
            "user",
            &"long ".repeat(40),
            "2026-01-02T09:00:00Z",
        );
        say(&kv, "c3", "user", "bob's", "2026-01-03T09:00:00Z");
        // c4 is claimed but has no turn yet; c5 has turns but no owner.
        say(&kv, "c5", "user", "orphan", "2026-01-04T09:00:00Z");
        kv.set("conv/c1/bookmarks", b"[]").unwrap();
        // A conversation begun in a turn without an id (claim_new), through its journal.
        let journal = crate::memory::Journal::new(&kv);
        claim_new(&journal, "c6", "ann").unwrap();
        say(&journal, "c6", "user", "fresh", "2026-01-05T09:00:00Z");
        assert!(
            list_owned(&kv, "ann").unwrap().iter().all(|l| l.id != "c6"),
            "listed before its batch"
        );
        journal.flush().unwrap();
        let listed = list_owned(&kv, "ann").unwrap();
        let ids: Vec<&str> = listed.iter().map(|l| l.id.as_str()).collect();
        assert_eq!(ids, ["c6", "c2", "c1"]);
        assert_eq!(listed[2].title, "Who supplies ACME?");
        assert_eq!(listed[2].updated, "2026-01-01T10:00:05Z");
        assert_eq!(listed[2].turns, 2);
        assert_eq!(listed[1].title.chars().count(), TITLE_CHARS);
        assert_eq!(list_owned(&kv, "bob").unwrap()[0].id, "c3");
        assert!(list_owned(&kv, "root").unwrap().is_empty());

        // Deleted, then claimed again by someone else: gone from ann's list.
        memory::delete(&kv, "c2").unwrap();
        forget(&kv, "c2").unwrap();
        authorize(&kv, "c2", "bob", false, true).unwrap();
        say(&kv, "c2", "user", "bob's now", "2026-01-06T09:00:00Z");
        let ids = listed_ids(&kv, "ann");
        assert_eq!(ids, ["c6", "c1"]);
        let ids = listed_ids(&kv, "bob");
        assert_eq!(ids, ["c2", "c3"]);
        assert_eq!(kv.1.get(), 0, "the keys were listed");
    }

    /// Conversations an earlier version wrote (its turn keys, `owner/<id>`, no index) are
    /// listed with those claimed since, after the one migration.
    /// The ids `subject`'s listing gives, in its order.
    fn listed_ids(kv: &dyn Kv, subject: &str) -> Vec<String> {
        list_owned(kv, subject)
            .unwrap()
            .into_iter()
            .map(|l| l.id)
            .collect()
    }

    #[test]
    fn legacy_conversations_are_listed_with_new_ones() {
        let kv = MemKv::default();
        let legacy = |id: &str, owner: &str, at: &str, content: &str| {
            let turn = Turn {
                role: "user".into(),
                content: content.into(),
                name: None,
                at: at.into(),
                route: None,
            };
            kv.set(
                &format!("conv/{id}/turn/{at}-0000000000000000"),
                &serde_json::to_vec(&turn).unwrap(),
            )
            .unwrap();
            kv.set(&format!("owner/{id}"), owner.as_bytes()).unwrap();
        };
        legacy("old1", "ann", "2025-01-01T00:00:00Z", "first old");
        legacy("old1", "ann", "2025-01-01T00:01:00Z", "second old");
        legacy("old2", "bob", "2025-01-02T00:00:00Z", "bob's old");
        // Claimed by this version before anything was migrated.
        authorize(&kv, "new1", "ann", false, true).unwrap();
        say(&kv, "new1", "user", "new", "2026-01-01T00:00:00Z");

        let listed = list_owned(&kv, "ann").unwrap();
        assert_eq!(kv.1.get(), 1, "the migration listed the keys once");
        let ids: Vec<&str> = listed.iter().map(|l| l.id.as_str()).collect();
        assert_eq!(ids, ["new1", "old1"], "each once");
        assert_eq!(
            (
                listed[1].title.as_str(),
                listed[1].updated.as_str(),
                listed[1].turns
            ),
            ("first old", "2025-01-01T00:01:00Z", 2)
        );
        // Continued: its new turns count and date it.
        say(&kv, "old1", "assistant", "answer", "2026-02-01T00:00:00Z");
        let listed = list_owned(&kv, "ann").unwrap();
        assert_eq!(listed[0].id, "old1");
        assert_eq!(listed[0].turns, 3);
        assert_eq!(list_owned(&kv, "bob").unwrap()[0].title, "bob's old");
        // Deleted: gone.
        memory::delete(&kv, "old1").unwrap();
        forget(&kv, "old1").unwrap();
        let ids = listed_ids(&kv, "ann");
        assert_eq!(ids, ["new1"]);
        assert_eq!(kv.1.get(), 1, "and never again");
    }

    /// Subjects are arbitrary strings: the index's keys stay short and distinct.
    #[test]
    fn subjects_are_keyed_by_their_hash() {
        let long = "x".repeat(1000);
        for subject in ["ann", "ann/../bob", long.as_str(), "ünï cödé"] {
            let k = subject_entry_key(subject, 123);
            assert!(k.len() < 100 && k.is_ascii(), "{k}");
        }
        assert_ne!(subject_count_key("ann"), subject_count_key("Ann"));
    }

    #[test]
    fn only_the_owner_or_an_admin_gets_in() {
        let kv = MemKv::default();
        assert_eq!(
            authorize(&kv, "c1", "ann", false, false),
            Err(Refused::NotFound)
        );
        authorize(&kv, "c1", "ann", false, true).unwrap();
        authorize(&kv, "c1", "ann", false, false).unwrap();
        assert_eq!(
            authorize(&kv, "c1", "bob", false, false),
            Err(Refused::NotFound)
        );
        assert_eq!(
            authorize(&kv, "c1", "bob", false, true),
            Err(Refused::NotFound),
            "starting a turn in someone else's conversation does not take it over"
        );
        authorize(&kv, "c1", "root", true, false).unwrap();
        forget(&kv, "c1").unwrap();
        assert_eq!(
            authorize(&kv, "c1", "ann", false, false),
            Err(Refused::NotFound)
        );
        authorize(&kv, "c1", "bob", false, true).unwrap();
        assert_eq!(
            kv.get("owner/c1").unwrap().as_deref(),
            Some(&b"bob"[..]),
            "a forgotten id can be claimed again"
        );
        assert_eq!(
            authorize(&kv, "../x", "ann", false, true),
            Err(Refused::NotFound)
        );
    }

    /// A store on which every claimant reads "no owner yet": the race a read-then-write
    /// claim lost (both read before either wrote, and both were admitted).
    struct NoOwnerYet(MemKv);

    impl Kv for NoOwnerYet {
        fn get(&self, key: &str) -> Result<Option<Vec<u8>>, String> {
            if key.starts_with("owner/") {
                return Ok(None);
            }
            self.0.get(key)
        }
        fn set(&self, key: &str, value: &[u8]) -> Result<(), String> {
            self.0.set(key, value)
        }
        fn delete(&self, key: &str) -> Result<(), String> {
            self.0.delete(key)
        }
        fn keys(&self) -> Result<Vec<String>, String> {
            self.0.keys()
        }
    }

    #[test]
    fn of_claimants_that_all_read_no_owner_only_the_first_is_admitted() {
        let kv = NoOwnerYet(MemKv::default());
        authorize(&kv, "shared", "ann", false, true).unwrap();
        assert_eq!(
            authorize(&kv, "shared", "bob", false, true),
            Err(Refused::NotFound)
        );
        authorize(&kv, "shared", "root", true, true).unwrap();
        assert_eq!(
            kv.0.get("owner/shared").unwrap().as_deref(),
            Some(&b"ann"[..])
        );
    }

    /// Through a turn's journal too, the winner's owner is written at once: its next
    /// turns get in, the others are refused, an admin is let in.
    #[test]
    fn the_first_claim_wins_and_the_others_are_refused() {
        let kv = MemKv::default();
        let journal = crate::memory::Journal::new(&kv);
        authorize(&journal, "shared", "ann", false, true).unwrap();
        assert_eq!(
            kv.get("owner/shared").unwrap().as_deref(),
            Some(&b"ann"[..])
        );
        assert_eq!(
            authorize(&kv, "shared", "bob", false, true),
            Err(Refused::NotFound)
        );
        authorize(&kv, "shared", "root", true, true).unwrap();
        authorize(&kv, "shared", "ann", false, true).unwrap();
        assert_eq!(
            authorize(&kv, "shared", "bob", false, true),
            Err(Refused::NotFound)
        );
    }
}
