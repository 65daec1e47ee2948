//! A turn that begins a conversation reads nothing of it from the store (there is nothing
//! yet), and never lists the store's keys (a cost that grows with the whole store); the
//! next turn of that conversation reads its history as before.

use super::fakes::{Say, World};
use super::{actor, body};
use crate::memory::tests::WatchedKv;
use crate::turn::deadline::Deadline;
use crate::turn::ports::Ports;
use crate::turn::{Settings, TurnResult, turn};
use kg_http::ApiError;
use kg_wit::kg::router::router::Intent;

fn run(
    world: &mut World,
    kv: &WatchedKv,
    conversation: Option<&str>,
) -> Result<TurnResult, ApiError> {
    let mut ports = Ports {
        kv,
        model: &mut world.model,
        tools: &mut world.tools,
        router: &mut world.router,
        summariser: &mut world.summariser,
        executor: &mut world.executor,
        sink: &mut world.sink,
        clock: &world.clock,
        chain: &mut world.chain,
    };
    turn(
        &body("how many suppliers are there?", conversation),
        &Settings {
            max_steps: 5,
            deadline: Deadline::NONE,
        },
        &actor(true),
        &mut ports,
    )
}

#[test]
fn a_new_conversation_is_not_read_and_the_next_turn_reads_it() {
    let kv = WatchedKv::default();
    let mut world = World::new(Intent::Query, vec![Say::Text("There are 10.")], false);
    let first = run(&mut world, &kv, None).expect("first turn");
    let conversation = first.conversation_id.clone();
    let prefix = format!("conv/{conversation}/");
    assert_eq!(kv.listed.get(), 0, "the store's keys were listed");
    assert!(
        !kv.read.borrow().iter().any(|k| k.starts_with(&prefix)),
        "a new conversation's keys were read: {:?}",
        kv.read.borrow()
    );

    world.model.script = vec![Say::Text("Still 10.")].into();
    run(&mut world, &kv, Some(&conversation)).expect("second turn");
    assert_eq!(kv.listed.get(), 1, "the second turn lists its turns once");
    assert!(
        kv.read.borrow().iter().any(|k| k.starts_with(&prefix)),
        "the second turn read nothing of its conversation"
    );
}
