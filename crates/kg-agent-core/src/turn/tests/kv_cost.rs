//! What a chat turn, `GET /conversations`, `GET /conversations/{id}` and its delete cost
//! in key-value operations, counted: the same in a store holding 1,000 other
//! conversations as in an empty one, and no listing of the store's keys once the legacy
//! layout was migrated (the migration lists them once).
//!
//! Counted before the index (the layout that named turns by time, Nov 2026), turns 2–4 of
//! a conversation read 5, 7, 9 keys and listed the store once each (5,003 to 5,007 keys
//! with the 1,000 others); the listing read the owner of every conversation in the store
//! (1,003 reads) after listing it; `GET /conversations/{id}` and the delete listed it too.

use super::fakes::{Say, World};
use super::{actor, ask_on};
use crate::memory::Kv;
use crate::memory::tests::MemKv;
use crate::turn::TurnResult;
use kg_wit::kg::router::router::Intent;
use std::cell::Cell;

/// Operations by kind: reads, sets, batches, keys batched, increments, deletes, listings,
/// keys listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Cost([usize; 8]);

#[derive(Default)]
struct Counting {
    inner: MemKv,
    ops: Cell<Cost>,
}

impl Counting {
    fn add(&self, kind: usize, n: usize) {
        let mut c = self.ops.get();
        c.0[kind] += n;
        self.ops.set(c);
    }

    /// What `work` cost.
    fn cost<T>(&self, work: impl FnOnce() -> T) -> (T, Cost) {
        let before = self.ops.get().0;
        let out = work();
        let after = self.ops.get().0;
        (out, Cost(std::array::from_fn(|i| after[i] - before[i])))
    }
}

impl Kv for Counting {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, String> {
        self.add(0, 1);
        self.inner.get(key)
    }
    fn set(&self, key: &str, value: &[u8]) -> Result<(), String> {
        self.add(1, 1);
        self.inner.set(key, value)
    }
    fn set_many(&self, entries: &[(String, Vec<u8>)]) -> Result<(), String> {
        self.add(2, 1);
        self.add(3, entries.len());
        self.inner.set_many(entries)
    }
    fn increment(&self, key: &str, delta: i64) -> Result<i64, String> {
        self.add(4, 1);
        self.inner.increment(key, delta)
    }
    fn delete(&self, key: &str) -> Result<(), String> {
        self.add(5, 1);
        self.inner.delete(key)
    }
    fn keys(&self) -> Result<Vec<String>, String> {
        self.add(6, 1);
        let keys = self.inner.keys()?;
        self.add(7, keys.len());
        Ok(keys)
    }
}

fn run(world: &mut World, kv: &Counting, conversation: Option<&str>) -> TurnResult {
    ask_on(world, kv, conversation).expect("a turn")
}

/// The costs of: the first turn, turns 2 to 4, the listing, the conversation, its delete.
fn costs(others: usize) -> Vec<Cost> {
    let kv = Counting::default();
    // Other conversations, as an earlier version wrote them; migrated up front.
    for i in 0..others {
        kv.inner.set(&format!("owner/o{i}"), b"someone").unwrap();
        for t in 0..4 {
            kv.inner
                .set(
                    &format!("conv/o{i}/turn/{t:016}-0000000000000000"),
                    br#"{"role":"user","content":"x","at":"t"}"#,
                )
                .unwrap();
        }
    }
    let migrated = crate::legacy::migrate(&kv.inner).unwrap();
    assert_eq!(migrated.conversations, others);
    let mut world = World::new(Intent::Query, vec![Say::Text("There are 10.")], false);
    let mut out = Vec::new();
    let (first, cost) = kv.cost(|| run(&mut world, &kv, None));
    out.push(cost);
    let c = first.conversation_id;
    for _ in 2..=4 {
        world.model.script = vec![Say::Text("Still 10.")].into();
        out.push(kv.cost(|| run(&mut world, &kv, Some(&c))).1);
    }
    let a = actor(true);
    let (listed, cost) = kv.cost(|| crate::answers::list(&kv, &a.caller.subject).unwrap());
    assert_eq!(listed["conversations"][0]["turns"], 8);
    out.push(cost);
    out.push(
        kv.cost(|| crate::answers::conversation(&kv, &c, &a).unwrap())
            .1,
    );
    out.push(kv.cost(|| crate::answers::delete(&kv, &c, &a).unwrap()).1);
    out
}

#[test]
fn memory_costs_what_the_conversation_holds_not_what_the_store_holds() {
    let empty = costs(0);
    let full = costs(1000);
    let names = [
        "turn 1", "turn 2", "turn 3", "turn 4", "list", "get", "delete",
    ];
    for (name, cost) in names.iter().zip(&full) {
        println!(
            "{name:7} [gets sets batches batched increments deletes listings listed] {:?}",
            cost.0
        );
    }
    assert_eq!(empty, full, "the cost grew with the store");
    for cost in &full {
        assert_eq!(cost.0[6], 0, "the store's keys were listed: {cost:?}");
    }
    // A turn: two batches (the question, with a new conversation's owner and index entry;
    // the answer) and an increment per turn remembered (and one of the subject's index).
    // A later turn reads the owner, the bookmarks, the marker, the legacy record, the
    // counter, the summary, the pending note and the recent turns (2 more each turn, up
    // to the window's 12).
    assert_eq!(full[0].0[..6], [0, 0, 2, 4, 3, 0]);
    assert_eq!(full[1].0[..6], [9, 0, 2, 2, 2, 0]);
    assert_eq!(full[3].0[..6], [13, 0, 2, 2, 2, 0]);
    // The listing: the marker, the subject's legacy list, counter and entry, then the
    // conversation's owner, legacy record, counter, first and newest turns.
    assert_eq!(full[4].0[..6], [9, 0, 0, 0, 0, 0]);
}
