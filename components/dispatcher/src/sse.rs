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
}

impl Wire for SpinWire {
    fn write(&mut self, frame: &[u8]) -> bool {
        let Some(stream) = &self.stream else {
            return false;
        };
        frame
            .chunks(WRITE_CHUNK)
            .all(|chunk| stream.blocking_write_and_flush(chunk).is_ok())
    }
    fn writable(&mut self) -> bool {
        self.stream
            .as_ref()
            .is_some_and(|s| s.check_write().is_ok())
    }
}

impl Drop for SpinWire {
    fn drop(&mut self) {
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

/// Opens the SSE response (`extra` headers too) on `out` and sends the first comment
/// before any work; `None` when the response could not be built.
pub fn open(extra: &[(String, String)], out: ResponseOutparam) -> Option<Streamed> {
    let headers = crate::headers::sse_fields(extra).ok()?;
    let response = OutgoingResponse::new(headers);
    let body = response.body().ok()?;
    let wire = SpinWire {
        stream: body.write().ok(),
        body: Some(body),
    };
    let mut sink = Streamed::new(Box::new(wire), Rc::new(SpinStreamClock));
    out.set(response);
    sink.comment("kg-agent");
    Some(sink)
}
