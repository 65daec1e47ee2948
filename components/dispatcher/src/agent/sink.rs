//! The SSE response body as the agent's event sink. Frames are written straight to the
//! body's output stream, so the stream can also be asked, without writing, whether the
//! client is still there (`check-write` fails once the host dropped the connection):
//! that is how a turn notices a departed client in the middle of an LLM call or a batch.
//! Each event carries the SSE id `<turn>:<seq>` and is kept in the key-value store
//! (`kg_agent_core::replay`), so a client that lost the stream can resume it. A watched
//! stream (`kg_agent_core::attach`) reports its client gone only once the grace period
//! has passed with no resuming reader attached; until then the turn runs on, unheard.

use super::kv::SpinKv;
use kg_agent_core::attach::Watch;
use kg_agent_core::events::{Event, StreamState};
use kg_agent_core::replay::{self, Recorder};
use kg_agent_core::turn::ports::EventSink;
use kg_http::sse;
use serde_json::json;
use spin_sdk::http::OutgoingBody;
use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;
use wasi::io::streams::OutputStream;

/// How often an idle stream hears from us (DESIGN.md §3).
pub const HEARTBEAT: Duration = Duration::from_secs(10);
/// Most bytes one `blocking-write-and-flush` takes (wasi:io).
const WRITE_CHUNK: usize = 4096;

struct Body {
    /// Dropped before `body` is finished.
    stream: Option<OutputStream>,
    body: Option<OutgoingBody>,
    /// The connection is gone: nothing more is written.
    gone: bool,
    /// Monotonic ms of the last frame written (heartbeats are paced from it).
    last_write_ms: u64,
    /// Set for a turn that may outlive its connection while a resume is possible.
    watch: Option<(SpinKv, Watch)>,
}

impl Body {
    fn write(&mut self, frame: &[u8]) {
        let Some(stream) = self.stream.as_ref().filter(|_| !self.gone) else {
            return;
        };
        for chunk in frame.chunks(WRITE_CHUNK) {
            if stream.blocking_write_and_flush(chunk).is_err() {
                self.gone = true;
                return;
            }
        }
        self.last_write_ms = kg_spin::clock::monotonic_ms();
    }

    /// True once the client is gone (asking the stream without writing) — for a watched
    /// turn, once no reader has resumed it within the grace period either.
    fn closed(&mut self) -> bool {
        if !self.gone
            && let Some(stream) = &self.stream
            && stream.check_write().is_err()
        {
            self.gone = true;
        }
        let gone = self.gone || self.stream.is_none();
        match &mut self.watch {
            Some((kv, watch)) => watch.abandoned(gone, epoch_ms(), kv),
            None => gone,
        }
    }
}

impl Drop for Body {
    fn drop(&mut self) {
        drop(self.stream.take());
        if let Some(body) = self.body.take() {
            // The client may be gone; there is nobody to tell.
            let _ = OutgoingBody::finish(body, None);
        }
    }
}

/// What an LLM call in flight needs of the stream: a heartbeat, and whether anyone is
/// still listening.
#[derive(Clone)]
pub struct Link(Rc<RefCell<Body>>);

impl Link {
    /// Sends a heartbeat comment if the stream has been quiet for [`HEARTBEAT`].
    pub fn beat(&self) {
        if let Ok(mut body) = self.0.try_borrow_mut()
            && kg_spin::clock::monotonic_ms().saturating_sub(body.last_write_ms)
                >= HEARTBEAT.as_millis() as u64
        {
            body.write(&sse::comment("heartbeat"));
        }
    }
    pub fn closed(&self) -> bool {
        self.0
            .try_borrow_mut()
            .map(|mut b| b.closed())
            .unwrap_or(false)
    }
}

/// Where a stream's events are kept for resuming.
pub struct Recording {
    pub kv: SpinKv,
    pub recorder: Recorder,
}

fn epoch_ms() -> u64 {
    u64::try_from(kg_spin::clock::epoch_ms()).unwrap_or_default()
}

/// Writes each event to the response body as it comes, with seed 001's envelope, ending
/// with `completed` then `done`.
pub struct Streamed {
    body: Rc<RefCell<Body>>,
    state: StreamState,
    recording: Option<Recording>,
}

impl Streamed {
    /// Opens the SSE response (`extra` headers too) on `out` and sends the first comment
    /// before any work; `None` when the response could not be built.
    pub fn open(
        extra: &[(String, String)],
        out: spin_sdk::http::ResponseOutparam,
    ) -> Option<Streamed> {
        let headers = crate::headers::sse_fields(extra).ok()?;
        let response = spin_sdk::http::OutgoingResponse::new(headers);
        let body = response.body().ok()?;
        let mut sink = Streamed::new(body);
        out.set(response);
        sink.comment("kg-agent");
        Some(sink)
    }

    pub fn new(body: OutgoingBody) -> Self {
        let stream = body.write().ok();
        let gone = stream.is_none();
        Streamed {
            body: Rc::new(RefCell::new(Body {
                stream,
                body: Some(body),
                gone,
                last_write_ms: kg_spin::clock::monotonic_ms(),
                watch: None,
            })),
            state: StreamState::default(),
            recording: None,
        }
    }

    /// Keeps every event from now on for a resume.
    pub fn record(&mut self, recording: Recording) {
        self.recording = Some(recording);
    }

    /// Lets the turn outlive its connection while `watch` says a resume may still come.
    pub fn watch(&mut self, kv: SpinKv, watch: Watch) {
        self.body.borrow_mut().watch = Some((kv, watch));
    }

    pub fn comment(&mut self, text: &str) {
        self.body.borrow_mut().write(&sse::comment(text));
    }

    /// Writes a frame as it is (a resumed stream's stored frames).
    pub fn raw(&mut self, frame: &[u8]) {
        self.body.borrow_mut().write(frame);
    }

    pub fn link(&self) -> Link {
        Link(self.body.clone())
    }
}

impl EventSink for Streamed {
    fn emit(&mut self, event: Event) {
        let timestamp = kg_spin::clock::now_rfc3339();
        let mut body = self.body.borrow_mut();
        for (kind, mut data) in self.state.frames(&event, &timestamp) {
            let Some(Recording { kv, recorder }) = &mut self.recording else {
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
            let now = epoch_ms();
            recorder.record(kv, (seq, frame), kind == "content", now);
            if kind == "done" {
                recorder.flush(kv, true, now);
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
