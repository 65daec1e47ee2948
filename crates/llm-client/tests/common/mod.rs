//! A scripted transport and a fake clock: the LLM and time, both under the test's control.
#![allow(dead_code)]

use llm_client::{
    Clock, HttpRequest, HttpResponse, LlmTransport, Transport, TransportError, TransportErrorKind,
};
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;
use std::time::Duration;

#[derive(Clone, Default)]
pub struct FakeClock {
    now: Rc<Cell<Duration>>,
    pub sleeps: Rc<RefCell<Vec<Duration>>>,
}

impl FakeClock {
    pub fn advance(&self, by: Duration) {
        self.now.set(self.now.get() + by);
    }
}

impl Clock for FakeClock {
    fn elapsed(&self) -> Duration {
        self.now.get()
    }

    fn sleep(&self, duration: Duration) {
        self.sleeps.borrow_mut().push(duration);
        self.advance(duration);
    }
}

/// One scripted attempt: what the endpoint answers and how long it takes.
pub struct Step {
    pub outcome: Result<HttpResponse, TransportError>,
    pub takes: Duration,
}

pub fn status(code: u16, body: &str) -> Step {
    Step {
        outcome: Ok(HttpResponse {
            status: code,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.as_bytes().to_vec(),
        }),
        takes: Duration::from_millis(5),
    }
}

pub fn sse(body: &str) -> Step {
    Step {
        outcome: Ok(HttpResponse {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            body: body.as_bytes().to_vec(),
        }),
        takes: Duration::from_millis(5),
    }
}

pub fn failure(kind: TransportErrorKind) -> Step {
    Step {
        outcome: Err(TransportError {
            kind,
            message: format!("scripted {kind:?}"),
        }),
        takes: Duration::from_millis(5),
    }
}

pub struct Scripted {
    steps: RefCell<VecDeque<Step>>,
    clock: FakeClock,
    pub requests: RefCell<Vec<HttpRequest>>,
    /// The per-attempt bound the client passed each time.
    pub timeouts: RefCell<Vec<Duration>>,
}

impl Scripted {
    pub fn new(clock: &FakeClock, steps: Vec<Step>) -> Self {
        Scripted {
            steps: RefCell::new(steps.into()),
            clock: clock.clone(),
            requests: RefCell::new(vec![]),
            timeouts: RefCell::new(vec![]),
        }
    }

    pub fn attempts(&self) -> usize {
        self.requests.borrow().len()
    }

    pub fn body(&self, attempt: usize) -> serde_json::Value {
        let requests = self.requests.borrow();
        serde_json::from_slice(requests[attempt].body.as_deref().unwrap_or_default())
            .expect("the client sends JSON")
    }
}

impl Transport for &Scripted {
    fn send(&self, request: HttpRequest) -> Result<HttpResponse, TransportError> {
        self.send_within(request, Duration::MAX)
    }
}

impl LlmTransport for &Scripted {
    fn send_within(
        &self,
        request: HttpRequest,
        timeout: Duration,
    ) -> Result<HttpResponse, TransportError> {
        self.requests.borrow_mut().push(request);
        self.timeouts.borrow_mut().push(timeout);
        let step = self
            .steps
            .borrow_mut()
            .pop_front()
            .expect("the script has an answer for every attempt");
        if step.takes > timeout {
            self.clock.advance(timeout);
            return Err(TransportError {
                kind: TransportErrorKind::Timeout,
                message: "scripted slow answer".into(),
            });
        }
        self.clock.advance(step.takes);
        step.outcome
    }
}

pub fn golden(name: &str) -> String {
    let path = format!("{}/tests/golden/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}
