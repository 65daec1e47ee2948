//! The SSE response body as the agent's event sink. Frames are written straight to the
//! body's output stream, so the stream can also be asked, without writing, whether the
//! client is still there (`check-write` fails once the host dropped the connection):
//! that is how a turn notices a departed client in the middle of an LLM call or a batch.

use kg_agent_core::events::{Event, StreamState};
use kg_agent_core::turn::ports::EventSink;
use kg_http::sse;
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
    gone: bool,
    /// Monotonic ms of the last frame written (heartbeats are paced from it).
    last_write_ms: u64,
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

    /// True once the client is gone; asks the stream without writing.
    fn closed(&mut self) -> bool {
        if !self.gone
            && let Some(stream) = &self.stream
            && stream.check_write().is_err()
        {
            self.gone = true;
        }
        self.gone || self.stream.is_none()
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

/// Writes each event to the response body as it comes, with seed 001's envelope, ending
/// with `completed` then `done`.
pub struct Streamed {
    body: Rc<RefCell<Body>>,
    state: StreamState,
}

impl Streamed {
    pub fn new(body: OutgoingBody) -> Self {
        let stream = body.write().ok();
        let gone = stream.is_none();
        Streamed {
            body: Rc::new(RefCell::new(Body {
                stream,
                body: Some(body),
                gone,
                last_write_ms: kg_spin::clock::monotonic_ms(),
            })),
            state: StreamState::default(),
        }
    }

    pub fn comment(&mut self, text: &str) {
        self.body.borrow_mut().write(&sse::comment(text));
    }

    pub fn link(&self) -> Link {
        Link(self.body.clone())
    }
}

impl EventSink for Streamed {
    fn emit(&mut self, event: Event) {
        let timestamp = kg_spin::clock::now_rfc3339();
        let mut body = self.body.borrow_mut();
        for (kind, data) in self.state.frames(&event, &timestamp) {
            body.write(&sse::event(kind, data));
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
