//! A turn whose connection is cut runs on while [`Watch`] says a resume may still come:
//! a batch cut halfway finishes and is reported when a reader is attached, and is cut
//! short as before when nobody comes back within the grace.

use super::fakes::{Gone, Sink, World};
use super::{actor, body, payment_script};
use crate::attach::{self, Watch};
use crate::events::Event;
use crate::memory::{self, tests::MemKv};
use crate::turn::deadline::Deadline;
use crate::turn::ports::{EventSink, Ports};
use crate::turn::{CANCELLED_ROUTE, Settings, TurnResult, turn};
use kg_http::ApiError;
use kg_wit::kg::router::router::Intent;
use std::cell::{Cell, RefCell};

const TURN: &str = "t-detached";

/// The dispatcher's sink, faked: `cut` is the connection; the turn sees its client gone
/// only once the watch says so (then the fakes' `gone` is set, and they refuse calls).
struct Detachable<'a> {
    inner: &'a mut Sink,
    cut: Gone,
    watch: RefCell<Watch>,
    store: &'a MemKv,
    /// Epoch ms, 50 ms further at every look.
    now: Cell<u64>,
    /// A resuming reader is attached and marks the turn at every look.
    reader: bool,
}

impl EventSink for Detachable<'_> {
    fn emit(&mut self, event: Event) {
        self.inner.emit(event);
    }
    fn gone(&self) -> bool {
        let now = self.now.get() + 50;
        self.now.set(now);
        if self.reader && self.cut.get() {
            attach::mark(self.store, TURN, now).unwrap();
        }
        let abandoned = self
            .watch
            .borrow_mut()
            .abandoned(self.cut.get(), now, self.store);
        if abandoned {
            self.inner.gone.set(true);
        }
        abandoned
    }
    fn streaming(&self) -> bool {
        true
    }
}

/// Pays all ACME orders (four chunks of five); the connection is cut after two chunks.
fn pay_with_a_cut(reader: bool) -> (World, Result<TurnResult, ApiError>) {
    let mut world = World::new(Intent::Action, vec![], true);
    let ids = world.tools.order_ids();
    world.model.script = payment_script(&ids).into();
    let cut = Gone::default();
    world.executor.leave_after_chunks = Some((2, cut.clone()));
    let store = MemKv::default();
    let mut sink = Detachable {
        inner: &mut world.sink,
        cut,
        watch: RefCell::new(Watch::new(TURN, 100)),
        store: &store,
        now: Cell::new(1_000_000),
        reader,
    };
    let mut ports = Ports {
        kv: &world.kv,
        model: &mut world.model,
        tools: &mut world.tools,
        router: &mut world.router,
        summariser: &mut world.summariser,
        executor: &mut world.executor,
        sink: &mut sink,
        clock: &world.clock,
        chain: &mut world.chain,
    };
    let result = turn(
        &body("pay all ACME orders", None),
        &Settings {
            max_steps: 10,
            deadline: Deadline::NONE,
        },
        &actor(true),
        &mut ports,
    );
    (world, result)
}

#[test]
fn with_a_reader_attached_a_cut_batch_runs_to_the_end_and_is_reported() {
    let (world, result) = pay_with_a_cut(true);
    let result = result.unwrap();
    let log = world.executor.log.borrow();
    assert!(!log.cancelled);
    assert_eq!(log.chunks_pulled, 4);
    assert_eq!(world.summariser.requests.len(), 1, "the report is written");
    assert!(!result.answer.is_empty());
    assert!(matches!(
        world.sink.events.last(),
        Some(Event::Completed(_))
    ));
}

#[test]
fn with_nobody_back_within_the_grace_the_turn_is_cut_short_as_before() {
    let (world, result) = pay_with_a_cut(false);
    assert_eq!(result.unwrap_err().code, "client_gone");
    // The grace (100 ms, two looks) let the batch's last two chunks run; then the turn
    // is cancelled: no LLM-written report, the conversation says so.
    assert_eq!(world.executor.log.borrow().chunks_pulled, 4);
    assert!(world.summariser.requests.is_empty());
    let Some(Event::ConversationId(conversation)) = world.sink.events.first() else {
        panic!("{:?}", world.sink.events);
    };
    let turns = memory::load(&world.kv, conversation).unwrap().turns;
    assert_eq!(
        turns.last().unwrap().route.as_deref(),
        Some(CANCELLED_ROUTE)
    );
    assert!(
        !world
            .sink
            .events
            .iter()
            .any(|e| matches!(e, Event::Completed(_)))
    );
}
