//! A turn's Server-Sent Events output, free of the host: the host hands over the response
//! body as a [`Wire`] (write bytes; is the client still there?) and a [`StreamClock`], and
//! this module does the rest. Frames go straight to the wire, so the stream can also be
//! asked, without writing, whether the client is still there: that is how a turn notices
//! a departed client in the middle of an LLM call or a batch. A recorded stream gives
//! each event the SSE id `<turn>:<seq>` and keeps it in the key-value store
//! ([`crate::replay`]), so a client that lost the stream can resume it; such a stream is
//! also watched ([`crate::attach`]): it reports its client gone only once the grace
//! period has passed with no resuming reader attached; until then the turn runs on,
//! unheard.

use crate::attach::Watch;
use crate::events::{Event, StreamState};
use crate::memory::Kv;
use crate::replay::{self, Recorder};
use crate::turn::ports::EventSink;
use kg_http::{ApiError, sse};
use serde_json::json;
use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

/// How often an idle stream hears from us (DESIGN.md §3).
pub const HEARTBEAT: Duration = Duration::from_secs(10);

/// The response body, as the host writes it.
pub trait Wire {
    /// Writes `frame` whole and flushes it; `false` when the client is gone.
    fn write(&mut self, frame: &[u8]) -> bool;
    /// Whether the client is still there, asked without writing.
    fn writable(&mut self) -> bool;
}

/// The host's clocks, as a stream needs them.
pub trait StreamClock {
    /// Paces heartbeats.
    fn monotonic_ms(&self) -> u64;
    /// Stamps what is kept for a resume (shared with other instances).
    fn epoch_ms(&self) -> u64;
    /// RFC 3339, the events' `timestamp`.
    fn timestamp(&self) -> String;
}

struct Body {
    wire: Box<dyn Wire>,
    clock: Rc<dyn StreamClock>,
    /// The connection is gone: nothing more is written.
    gone: bool,
    /// Monotonic ms of the last frame written (heartbeats are paced from it).
    last_write_ms: u64,
    /// Set for a turn that may outlive its connection while a resume is possible.
    watch: Option<(Rc<dyn Kv>, Watch)>,
}

impl Body {
    fn write(&mut self, frame: &[u8]) {
        if self.gone {
            return;
        }
        if !self.wire.write(frame) {
            self.gone = true;
            return;
        }
        self.last_write_ms = self.clock.monotonic_ms();
    }

    /// True once the client is gone — for a watched turn, once no reader has resumed it
    /// within the grace period either.
    fn closed(&mut self) -> bool {
        if !self.gone && !self.wire.writable() {
            self.gone = true;
        }
        match &mut self.watch {
            Some((kv, watch)) => watch.abandoned(self.gone, self.clock.epoch_ms(), kv.as_ref()),
            None => self.gone,
        }
    }

    fn beat(&mut self) {
        let quiet = self.clock.monotonic_ms().saturating_sub(self.last_write_ms);
        if quiet >= HEARTBEAT.as_millis() as u64 {
            self.write(&sse::comment("heartbeat"));
        }
    }
}

/// What an LLM call in flight needs of the stream: a heartbeat, and whether anyone is
/// still listening. While the stream itself is busy (borrowed), neither does anything.
#[derive(Clone)]
pub struct Link(Rc<RefCell<Body>>);

impl Link {
    /// Sends a heartbeat comment if the stream has been quiet for [`HEARTBEAT`].
    pub fn beat(&self) {
        if let Ok(mut body) = self.0.try_borrow_mut() {
            body.beat();
        }
    }
    pub fn closed(&self) -> bool {
        self.0
            .try_borrow_mut()
            .map(|mut b| b.closed())
            .unwrap_or(false)
    }
}

/// Writes each event to the wire as it comes, with seed 001's envelope, ending with
/// `completed` then `done`.
pub struct Streamed {
    body: Rc<RefCell<Body>>,
    state: StreamState,
    recording: Option<(Rc<dyn Kv>, Recorder)>,
}

impl Streamed {
    pub fn new(wire: Box<dyn Wire>, clock: Rc<dyn StreamClock>) -> Self {
        let last_write_ms = clock.monotonic_ms();
        Streamed {
            body: Rc::new(RefCell::new(Body {
                wire,
                clock,
                gone: false,
                last_write_ms,
                watch: None,
            })),
            state: StreamState::default(),
            recording: None,
        }
    }

    /// Keeps every event from now on under `turn` for a resume by `owner` (removing the
    /// kept turns that expired first), and lets the turn outlive its connection for
    /// `grace_ms` while a resume may still come.
    pub fn record(
        &mut self,
        kv: Rc<dyn Kv>,
        turn: &str,
        owner: &str,
        retention_ms: u64,
        grace_ms: u64,
    ) {
        let now = self.body.borrow().clock.epoch_ms();
        let recorder = Recorder::start(kv.as_ref(), turn, owner, now, retention_ms);
        self.body.borrow_mut().watch = Some((kv.clone(), Watch::new(turn, grace_ms)));
        self.recording = Some((kv, recorder));
    }

    pub fn comment(&mut self, text: &str) {
        self.body.borrow_mut().write(&sse::comment(text));
    }

    /// Writes a frame as it is (a resumed stream's stored frames, a batch's events).
    pub fn raw(&mut self, frame: &[u8]) {
        self.body.borrow_mut().write(frame);
    }

    pub fn link(&self) -> Link {
        Link(self.body.clone())
    }

    /// Ends a turn's stream: `error` if it failed, then `done` (with the `completed` the
    /// turn did not send itself).
    pub fn finish(&mut self, failure: Option<&ApiError>) {
        if let Some(e) = failure {
            self.emit(Event::Error {
                code: e.code.clone(),
                message: e.message.clone(),
            });
        }
        self.emit(Event::Done);
    }

    /// Ends a stream that cannot go on with `error`, `completed` (failed) and `done`,
    /// unrecorded and without ids (a resumed stream's own ending).
    pub fn give_up(&mut self, code: &str, message: String) {
        let mut state = StreamState::default();
        let timestamp = self.body.borrow().clock.timestamp();
        let error = Event::Error {
            code: code.into(),
            message,
        };
        for event in [error, Event::Done] {
            for (kind, data) in state.frames(&event, &timestamp) {
                self.raw(&sse::event(kind, data));
            }
        }
    }
}

impl EventSink for Streamed {
    fn emit(&mut self, event: Event) {
        let mut body = self.body.borrow_mut();
        let timestamp = body.clock.timestamp();
        for (kind, mut data) in self.state.frames(&event, &timestamp) {
            let Some((kv, recorder)) = &mut self.recording else {
                body.write(&sse::event(kind, data));
                continue;
            };
            if kind == "completed" {
                data["turn_id"] = json!(recorder.turn());
            }
            let seq = recorder.next_seq();
            let mut frame = format!("id: {}\n", replay::event_id(recorder.turn(), seq));
            frame.push_str(&String::from_utf8_lossy(&sse::event(kind, data)));
            body.write(frame.as_bytes());
            // Kept whether or not the client is still there: a resume reads it.
            let now = body.clock.epoch_ms();
            recorder.record(kv.as_ref(), (seq, frame), kind == "content", now);
            if kind == "done" {
                recorder.flush(kv.as_ref(), true, now);
            }
        }
    }
    fn gone(&self) -> bool {
        self.body.borrow_mut().closed()
    }
    fn streaming(&self) -> bool {
        true
    }
    fn heartbeat(&mut self) {
        self.link().beat();
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::memory::tests::MemKv;
    use std::cell::Cell;

    /// A wire that keeps what it is sent and can be cut.
    #[derive(Clone, Default)]
    pub(crate) struct FakeWire {
        pub(crate) sent: Rc<RefCell<Vec<u8>>>,
        pub(crate) cut: Rc<Cell<bool>>,
    }

    impl Wire for FakeWire {
        fn write(&mut self, frame: &[u8]) -> bool {
            if self.cut.get() {
                return false;
            }
            self.sent.borrow_mut().extend_from_slice(frame);
            true
        }
        fn writable(&mut self) -> bool {
            !self.cut.get()
        }
    }

    impl FakeWire {
        pub(crate) fn text(&self) -> String {
            String::from_utf8_lossy(&self.sent.borrow()).into_owned()
        }
    }

    /// Both clocks read the same settable milliseconds.
    #[derive(Default)]
    pub(crate) struct FakeClock(pub(crate) Cell<u64>);

    impl StreamClock for FakeClock {
        fn monotonic_ms(&self) -> u64 {
            self.0.get()
        }
        fn epoch_ms(&self) -> u64 {
            self.0.get()
        }
        fn timestamp(&self) -> String {
            "2026-01-01T00:00:00Z".into()
        }
    }

    fn stream() -> (Streamed, FakeWire, Rc<FakeClock>) {
        let wire = FakeWire::default();
        let clock = Rc::new(FakeClock(Cell::new(1_000_000)));
        (
            Streamed::new(Box::new(wire.clone()), clock.clone()),
            wire,
            clock,
        )
    }

    #[test]
    fn a_recorded_stream_numbers_its_events_and_keeps_them() {
        let (mut sink, wire, _) = stream();
        let kv: Rc<dyn Kv> = Rc::new(MemKv::default());
        sink.record(kv.clone(), "t1", "alice", 600_000, 0);
        sink.emit(Event::Error {
            code: "x".into(),
            message: "y".into(),
        });
        sink.emit(Event::Done);
        let text = wire.text();
        assert!(text.starts_with("id: t1:1\nevent: error\n"), "{text}");
        assert!(text.contains("id: t1:2\nevent: completed\n"), "{text}");
        assert!(text.contains("\"turn_id\":\"t1\""), "{text}");
        let last = text.trim_end().rsplit("\n\n").next().unwrap_or_default();
        assert!(last.contains("event: done\n"), "{text}");
        let meta = replay::read_meta(kv.as_ref(), "t1").unwrap().unwrap();
        assert!(meta.done);
        let kept = replay::read_chunks(kv.as_ref(), "t1", 0, meta.chunks).unwrap();
        let joined: String = kept.into_iter().map(|(_, f)| f).collect();
        assert_eq!(joined, text, "what a resume reads is what was sent");
    }

    #[test]
    fn an_unrecorded_stream_has_no_ids_and_heartbeats_only_when_quiet() {
        let (mut sink, wire, clock) = stream();
        sink.emit(Event::Done);
        assert!(!wire.text().contains("id: "));
        let link = sink.link();
        clock
            .0
            .set(clock.0.get() + HEARTBEAT.as_millis() as u64 - 1);
        link.beat();
        assert!(!wire.text().contains("heartbeat"));
        clock.0.set(clock.0.get() + 1);
        link.beat();
        assert!(wire.text().ends_with(": heartbeat\n\n"), "{}", wire.text());
    }

    #[test]
    fn a_cut_wire_is_closed_at_once_without_a_watch_and_after_the_grace_with_one() {
        let (sink, wire, _) = stream();
        assert!(!sink.gone());
        wire.cut.set(true);
        assert!(sink.gone() && sink.link().closed());

        let (mut watched, wire, clock) = stream();
        watched.record(Rc::new(MemKv::default()), "t1", "alice", 600_000, 5_000);
        wire.cut.set(true);
        assert!(!watched.gone(), "within the grace");
        clock.0.set(clock.0.get() + 5_001);
        assert!(watched.gone(), "grace over, nobody resumed");
    }

    #[test]
    fn a_failed_turn_ends_with_its_error_then_completed_then_done() {
        let (mut sink, wire, _) = stream();
        sink.finish(Some(&ApiError::new(503, "llm_unavailable", "down")));
        let text = wire.text();
        let kinds: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("event: "))
            .collect();
        assert_eq!(kinds, ["error", "completed", "done"]);
        assert!(text.contains("\"code\":\"llm_unavailable\""), "{text}");
    }

    #[test]
    fn nothing_is_written_after_the_client_left() {
        let (mut sink, wire, _) = stream();
        sink.comment("kg-agent");
        wire.cut.set(true);
        sink.raw(b"lost");
        wire.cut.set(false);
        sink.raw(b"still lost");
        assert_eq!(wire.text(), ": kg-agent\n\n");
    }
}
