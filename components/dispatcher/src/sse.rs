//! An SSE response bound to Spin — the agent's streams and an action batch's: the wire and
//! clocks `kg_agent_core::stream` writes events through (framing, ids, recording for a
//! resume, heartbeats and the resume grace live there). Frames go straight to the body's
//! output stream, so `check-write` can say, without writing, that the host dropped the
//! connection.

pub use kg_agent_core::stream::{HEARTBEAT, Link, Streamed};
use kg_agent_core::stream::{StreamClock, Wire};
use spin_sdk::http::{OutgoingBody, OutgoingResponse, ResponseOutparam};
use std::rc::Rc;
use wasi::io::streams::OutputStream;

/// Most bytes one `blocking-write-and-flush` takes (wasi:io).
const WRITE_CHUNK: usize = 4096;

struct SpinWire {
    /// Dropped before `body` is finished.
    stream: Option<OutputStream>,
    body: Option<OutgoingBody>,
    /// The response, until the stream's first event: the opening comment waits in `held`,
    /// and goes into the body with the first event, in one write, before the response is
    /// set, so the head, the comment and the event leave together. On Spin, whose server
    /// does not set TCP_NODELAY, a small write sent after unacknowledged data waits for the
    /// client's delayed ACK (see `kg_spin::send_whole`): with the comment sent first, a
    /// turn's first event (`conversation_id`) came 46 ms after the request on Spin against
    /// 3 ms on devhost (`cargo bench --bench hosts`). One write, because the body holds
    /// one write until the host reads it (wasmtime-wasi-http's channel of one chunk).
    unsent: Option<(ResponseOutparam, OutgoingResponse)>,
    held: Vec<u8>,
}

impl SpinWire {
    /// Sets the response, with what is held (and `frame`) in its body if the stream takes
    /// them without waiting; `false` if `frame` was not written.
    fn start(&mut self, frame: &[u8]) -> bool {
        let Some((out, response)) = self.unsent.take() else {
            return false;
        };
        let mut first = std::mem::take(&mut self.held);
        first.extend_from_slice(frame);
        let written = self.stream.as_ref().is_some_and(|stream| {
            let fits = stream
                .check_write()
                .is_ok_and(|permit| usize::try_from(permit).is_ok_and(|p| p >= first.len()));
            fits && stream.write(&first).is_ok()
        });
        out.set(response);
        if written || first.is_empty() {
            return true;
        }
        // Too large to go first: everything in order, now that the host reads the body.
        self.send(&first)
    }

    fn send(&self, bytes: &[u8]) -> bool {
        let Some(stream) = &self.stream else {
            return false;
        };
        bytes
            .chunks(WRITE_CHUNK)
            .all(|chunk| stream.blocking_write_and_flush(chunk).is_ok())
    }
}

impl Wire for SpinWire {
    fn write(&mut self, frame: &[u8]) -> bool {
        if self.unsent.is_none() {
            return self.send(frame);
        }
        if self.held.is_empty() && frame.starts_with(b":") {
            // The opening comment: held for the first event.
            self.held.extend_from_slice(frame);
            return self.stream.is_some();
        }
        self.start(frame)
    }
    fn writable(&mut self) -> bool {
        self.stream
            .as_ref()
            .is_some_and(|s| s.check_write().is_ok())
    }
}

impl Drop for SpinWire {
    fn drop(&mut self) {
        self.start(&[]);
        drop(self.stream.take());
        if let Some(body) = self.body.take() {
            // The client may be gone; there is nobody to tell.
            let _ = OutgoingBody::finish(body, None);
        }
    }
}

struct SpinStreamClock;

impl StreamClock for SpinStreamClock {
    fn monotonic_ms(&self) -> u64 {
        kg_spin::clock::monotonic_ms()
    }
    fn epoch_ms(&self) -> u64 {
        u64::try_from(kg_spin::clock::epoch_ms()).unwrap_or_default()
    }
    fn timestamp(&self) -> String {
        kg_spin::clock::now_rfc3339()
    }
}

/// Opens the SSE response (`extra` headers too) on `out` with its first comment, sent
/// with the first event (see `SpinWire::unsent`); `None` when the response could not be
/// built.
pub fn open(extra: &[(String, String)], out: ResponseOutparam) -> Option<Streamed> {
    let headers = crate::headers::sse_fields(extra).ok()?;
    let response = OutgoingResponse::new(headers);
    let body = response.body().ok()?;
    let wire = SpinWire {
        stream: body.write().ok(),
        body: Some(body),
        unsent: Some((out, response)),
        held: Vec::new(),
    };
    let mut sink = Streamed::new(Box::new(wire), Rc::new(SpinStreamClock));
    // Held with the response until the first event (see `SpinWire::unsent`).
    sink.comment("kg-agent");
    Some(sink)
}
