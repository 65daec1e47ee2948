//! Where the agent's events go: collected for the JSON answer, or written to the client
//! as Server-Sent Events as they happen.

use super::model::Beat;
use futures::SinkExt;
use kg_agent_core::events::{Event, StreamState};
use kg_http::sse;
use std::cell::RefCell;
use std::rc::Rc;

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
    /// A heartbeat callable from inside an LLM call, for streams.
    fn beat(&self) -> Option<Beat> {
        None
    }
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

struct Body<S> {
    sink: S,
    gone: bool,
}

/// Writes each event to the response body as it comes; shared with the LLM transport
/// so heartbeats can go out while a call is pending.
pub struct Streamed<S> {
    body: Rc<RefCell<Body<S>>>,
    /// Stamps seed 001's envelope on each event and ends the stream with `completed`.
    state: StreamState,
}

impl<S: futures::Sink<Vec<u8>> + Unpin + 'static> Streamed<S> {
    pub fn new(sink: S) -> Self {
        Streamed {
            body: Rc::new(RefCell::new(Body { sink, gone: false })),
            state: StreamState::default(),
        }
    }

    pub fn comment(&mut self, text: &str) {
        write(&self.body, sse::comment(text));
    }
}

/// The agent runs synchronously between events; each frame is flushed before the next
/// step starts, so the client sees progress as it happens.
fn write<S: futures::Sink<Vec<u8>> + Unpin>(body: &RefCell<Body<S>>, frame: Vec<u8>) {
    let Ok(mut body) = body.try_borrow_mut() else {
        return;
    };
    if body.gone {
        return;
    }
    if spin_sdk::http::run(body.sink.send(frame)).is_err() {
        body.gone = true;
    }
}

impl<S: futures::Sink<Vec<u8>> + Unpin + 'static> EventSink for Streamed<S> {
    fn emit(&mut self, event: Event) {
        let timestamp = kg_spin::clock::now_rfc3339();
        for (kind, data) in self.state.frames(&event, &timestamp) {
            write(&self.body, sse::event(kind, data));
        }
    }
    fn gone(&self) -> bool {
        self.body.try_borrow().map(|b| b.gone).unwrap_or(false)
    }
    fn streaming(&self) -> bool {
        true
    }
    fn heartbeat(&mut self) {
        self.comment("heartbeat");
    }
    fn beat(&self) -> Option<Beat> {
        let body = self.body.clone();
        Some(Rc::new(move || write(&body, sse::comment("heartbeat"))))
    }
}
