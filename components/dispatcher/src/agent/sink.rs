//! Where the agent's events go: collected for the JSON answer, or written to the client
//! as Server-Sent Events as they happen.

use futures::SinkExt;
use kg_agent_core::events::Event;
use kg_http::sse;

pub trait EventSink {
    fn emit(&mut self, event: Event);
    /// True once the client has gone away: the agent stops working.
    fn gone(&self) -> bool;
    /// True when events reach the client as they happen (the answer can be streamed).
    fn streaming(&self) -> bool {
        false
    }
    /// Called while waiting; a stream sends a comment so proxies keep it open.
    fn heartbeat(&mut self) {}
}

/// Keeps every event, for `/chat`'s JSON answer.
#[derive(Default)]
pub struct Collected(pub Vec<Event>);

impl EventSink for Collected {
    fn emit(&mut self, event: Event) {
        self.0.push(event);
    }
    fn gone(&self) -> bool {
        false
    }
}

/// Writes each event to the response body as it comes.
pub struct Streamed<S> {
    body: S,
    gone: bool,
}

impl<S: futures::Sink<Vec<u8>> + Unpin> Streamed<S> {
    pub fn new(body: S) -> Self {
        Streamed { body, gone: false }
    }

    pub fn comment(&mut self, text: &str) {
        self.write(sse::comment(text));
    }

    fn write(&mut self, frame: Vec<u8>) {
        if self.gone {
            return;
        }
        // The agent runs synchronously between events; each frame is flushed before the
        // next step starts, so the client sees progress as it happens.
        if spin_sdk::http::run(self.body.send(frame)).is_err() {
            self.gone = true;
        }
    }
}

impl<S: futures::Sink<Vec<u8>> + Unpin> EventSink for Streamed<S> {
    fn emit(&mut self, event: Event) {
        let (kind, data) = event.encode();
        self.write(sse::event(kind, data));
    }
    fn gone(&self) -> bool {
        self.gone
    }
    fn streaming(&self) -> bool {
        true
    }
    fn heartbeat(&mut self) {
        self.comment("heartbeat");
    }
}
