//! A turn that begins a conversation reads nothing of it from the store (there is nothing
//! yet); the next turn of that conversation reads its history, by its counter and slots.
//! Neither lists the store's keys (a cost that grows with the whole store). A turn writes
//! what it remembers in two batches: the owner of a new conversation and its entry in the
//! subject's index with the question, then the rest.

use super::ask_on;
use super::fakes::{Say, World};
use crate::memory::Kv;
use crate::memory::tests::WatchedKv;
use kg_wit::kg::router::router::Intent;

#[test]
fn a_new_conversation_is_not_read_and_the_next_turn_reads_it() {
    let kv = WatchedKv::default();
    kv.inner.set(crate::legacy::MARKER, b"1").unwrap();
    let mut world = World::new(Intent::Query, vec![Say::Text("There are 10.")], false);
    let first = ask_on(&mut world, &kv, None).expect("first turn");
    let conversation = first.conversation_id.clone();
    let prefix = format!("conv/{conversation}/");
    assert_eq!(kv.listed.get(), 0, "the store's keys were listed");
    assert!(
        !kv.read.borrow().iter().any(|k| k.starts_with(&prefix)),
        "a new conversation's keys were read: {:?}",
        kv.read.borrow()
    );

    // What it remembers left in two batches: the owner and the subject's index entry with
    // the question, then the answer; a slot of the subject's index and one per turn were
    // taken by increments.
    let writes = kv.writes.borrow().clone();
    assert_eq!(writes.len(), 2, "{writes:?}");
    assert_eq!(writes[0][0], format!("owner/{conversation}"), "{writes:?}");
    assert!(writes[0][1].starts_with("subj/"), "{writes:?}");
    assert_eq!(writes[0].len(), 3, "{writes:?}");
    assert_eq!(writes[1].len(), 1, "{writes:?}");
    assert!(writes.concat()[2..].iter().all(|k| k.starts_with(&prefix)));
    let increments = kv.increments.borrow().clone();
    assert_eq!(increments.len(), 3, "{increments:?}");
    assert!(increments[0].starts_with("subj/"), "{increments:?}");
    assert_eq!(
        increments[1..],
        [format!("{prefix}count"), format!("{prefix}count")]
    );
    let stored = crate::memory::load(&kv, &conversation).unwrap().turns;
    let roles: Vec<&str> = stored.iter().map(|t| t.role.as_str()).collect();
    assert_eq!(roles, ["user", "assistant"]);

    world.model.script = vec![Say::Text("Still 10.")].into();
    ask_on(&mut world, &kv, Some(&conversation)).expect("second turn");
    let writes = kv.writes.borrow().clone();
    assert_eq!(writes.len(), 4, "the question, then the answer: {writes:?}");
    assert_eq!(kv.listed.get(), 0, "the store's keys were listed");
    assert!(
        kv.read.borrow().iter().any(|k| k.starts_with(&prefix)),
        "the second turn read nothing of its conversation"
    );
}
