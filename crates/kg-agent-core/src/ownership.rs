//! Conversations belong to the subject that started them (DESIGN.md §9). Someone else's
//! conversation is answered like one that does not exist (404), so ids leak nothing;
//! admins may read and delete any. The owner is kept beside the turns, under its own key
//! (`owner/<id>`), so listing or deleting a conversation's turns never touches it.

use crate::memory::{Kv, Turn, check_id};

fn key(conversation: &str) -> String {
    format!("owner/{conversation}")
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
/// once, not with the question ([`Kv::defer`]), to keep that moment short.)
fn claim(kv: &dyn Kv, conversation: &str, subject: &str, admin: bool) -> Result<(), Refused> {
    if kv
        .increment(&claim_key(conversation), 1)
        .map_err(Refused::Store)?
        == 1
    {
        return kv
            .set(&key(conversation), subject.as_bytes())
            .map_err(Refused::Store);
    }
    // Someone was first: the rules for an id that is not being started.
    authorize(kv, conversation, subject, admin, false)
}

/// Records `subject` as the owner of a conversation the turn has just named
/// (`kg_spin::clock::unique_id`: 64 random bits, so nobody else can have claimed it): no
/// read, and the write may leave with the turn's first turns ([`Kv::defer`]).
pub fn claim_new(kv: &dyn Kv, conversation: &str, subject: &str) -> Result<(), String> {
    check_id(conversation)?;
    kv.defer(&key(conversation), subject.as_bytes())
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
/// first, at most [`MAX_LISTED`]. One scan of the store's keys, then two reads per owned
/// conversation (the owner, then its first and newest turns); one without turns yet is left
/// out, as `GET /conversations/{id}` answers it 404.
pub fn list_owned(kv: &dyn Kv, subject: &str) -> Result<Vec<Listed>, String> {
    let keys = kv.keys()?;
    let mut turns: std::collections::HashMap<&str, Vec<&str>> = std::collections::HashMap::new();
    let mut owned = Vec::new();
    for k in &keys {
        if let Some(id) = k.strip_prefix("owner/") {
            owned.push(id);
        } else if let Some(rest) = k.strip_prefix("conv/")
            && let Some((id, tail)) = rest.split_once('/')
            && tail.starts_with("turn/")
        {
            turns.entry(id).or_default().push(k.as_str());
        }
    }
    let mut out = Vec::new();
    for id in owned {
        if check_id(id).is_err() || kv.get(&key(id))?.as_deref() != Some(subject.as_bytes()) {
            continue;
        }
        let Some(list) = turns.get_mut(id) else {
            continue;
        };
        list.sort_unstable();
        let read = |k: &str| -> Result<Option<Turn>, String> {
            Ok(kv
                .get(k)?
                .and_then(|v| serde_json::from_slice::<Turn>(&v).ok()))
        };
        let (Some(first), Some(last)) = (list.first(), list.last()) else {
            continue;
        };
        let Some(first) = read(first)? else { continue };
        let updated = if list.len() == 1 {
            first.at.clone()
        } else {
            read(last)?.map_or_else(|| first.at.clone(), |t| t.at)
        };
        out.push(Listed {
            id: id.to_string(),
            title: first.content.chars().take(TITLE_CHARS).collect(),
            updated,
            turns: list.len(),
        });
    }
    out.sort_by(|a, b| b.updated.cmp(&a.updated).then_with(|| a.id.cmp(&b.id)));
    out.truncate(MAX_LISTED);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::tests::MemKv;

    fn say(kv: &MemKv, conversation: &str, role: &str, content: &str, at: &str) {
        let turn = Turn {
            role: role.into(),
            content: content.into(),
            name: None,
            at: at.into(),
            route: None,
        };
        kv.set(
            &format!("conv/{conversation}/turn/{at}"),
            &serde_json::to_vec(&turn).unwrap(),
        )
        .unwrap();
    }

    #[test]
    fn lists_only_the_subjects_own_conversations_newest_first() {
        let kv = MemKv::default();
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
        let listed = list_owned(&kv, "ann").unwrap();
        let ids: Vec<&str> = listed.iter().map(|l| l.id.as_str()).collect();
        assert_eq!(ids, ["c2", "c1"]);
        assert_eq!(listed[1].title, "Who supplies ACME?");
        assert_eq!(listed[1].updated, "2026-01-01T10:00:05Z");
        assert_eq!(listed[1].turns, 2);
        assert_eq!(listed[0].title.chars().count(), TITLE_CHARS);
        assert_eq!(list_owned(&kv, "bob").unwrap()[0].id, "c3");
        assert!(list_owned(&kv, "root").unwrap().is_empty());
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
