//! Conversations belong to the subject that started them (DESIGN.md §9). Someone else's
//! conversation is answered like one that does not exist (404), so ids leak nothing;
//! admins may read and delete any. The owner is kept beside the turns, under its own key
//! (`owner/<id>`), so listing or deleting a conversation's turns never touches it.

use crate::memory::{Kv, check_id};

fn key(conversation: &str) -> String {
    format!("owner/{conversation}")
}

/// Why access was refused: the caller may not know the conversation exists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    NotFound,
    Store(String),
}

/// May `subject` use `conversation`? `start` claims an unowned id for the subject (a new
/// conversation); otherwise an unowned id is not found for anyone but an admin.
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
        None if start => kv
            .set(&key(conversation), subject.as_bytes())
            .map_err(Refused::Store),
        None if admin => Ok(()),
        None => Err(Refused::NotFound),
    }
}

/// Forgets the owner with the conversation.
pub fn forget(kv: &dyn Kv, conversation: &str) -> Result<(), String> {
    kv.delete(&key(conversation))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::tests::MemKv;

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
        assert_eq!(
            authorize(&kv, "../x", "ann", false, true),
            Err(Refused::NotFound)
        );
    }
}
