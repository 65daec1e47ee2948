//! The LLM as the agent calls it. While a call is out on a stream, the call is raced
//! against a short timer: each time the timer wins, the stream is asked whether the client
//! is still there (if not, the call is dropped at once and nothing more is sent) and,
//! after 10 quiet seconds, gets a heartbeat comment; then the wait goes on (within the
//! call's deadline). A turn with a deadline has its pending call cut when it passes, the
//! same way; no call starts after it.

use super::sink::{HEARTBEAT, Link};
use kg_agent_core::react::Model;
use kg_agent_core::turn::ports::{AgentModel, ModelPoll, ModelStream};
use kg_spin::{LlmStream, Pulled, SpinLlmTransport, send_reading, within_until};
use llm_client::{
    ChatRequest, ChatResponse, HttpRequest, HttpResponse, LlmClient, LlmError, LlmTransport,
    Transport, TransportError, TransportErrorKind,
};
use std::pin::pin;
use std::time::Duration;
use wasi::clocks::monotonic_clock;

/// How often a pending call checks that the client is still there: a departed client is
/// noticed within this much.
const CLIENT_CHECK: Duration = Duration::from_millis(20);

pub struct HeartbeatTransport {
    link: Option<Link>,
    /// The turn's deadline, monotonic ms (the turn's `Clock::monotonic_ms`).
    turn_end_ms: Option<u64>,
}

/// Not retried by the client (kind `Other`): the turn is over.
fn client_gone() -> TransportError {
    TransportError {
        kind: TransportErrorKind::Other,
        message: "the client disconnected".into(),
    }
}

/// Not retried by the client (kind `Other`): the turn is out of time.
fn out_of_time() -> TransportError {
    TransportError {
        kind: TransportErrorKind::Other,
        message: "the turn's deadline passed".into(),
    }
}

impl Transport for HeartbeatTransport {
    fn send(&self, request: HttpRequest) -> Result<HttpResponse, TransportError> {
        self.send_within(request, kg_spin::LLM_CALL_TIMEOUT)
    }
}

impl LlmTransport for HeartbeatTransport {
    fn send_within(
        &self,
        request: HttpRequest,
        timeout: Duration,
    ) -> Result<HttpResponse, TransportError> {
        let link = self.link.clone();
        if link.as_ref().is_some_and(Link::closed) {
            return Err(client_gone());
        }
        let tick = if link.is_some() {
            CLIENT_CHECK
        } else {
            HEARTBEAT
        };
        // In ns on the monotonic clock; the turn's end is reached exactly when its ms
        // clock reads `turn_end_ms`, so the turn then sees its deadline passed too. One
        // reading serves the checks, the call's end and the first wait (each reading is a
        // host call; they were microseconds apart). `end` only comes earlier for it.
        let turn_end = self.turn_end_ms.map(|ms| ms.saturating_mul(1_000_000));
        let mut now = monotonic_clock::now();
        if turn_end.is_some_and(|end| now >= end) {
            return Err(out_of_time());
        }
        let end = now.saturating_add(kg_spin::clock::nanos(timeout));
        let tick_ns = kg_spin::clock::nanos(tick);
        spin_sdk::http::run(async move {
            let mut work = pin!(send_reading(request, kg_spin::LLM_READ_HEADERS));
            loop {
                let to_turn_end = match turn_end {
                    Some(turn_end) if now >= turn_end => return Err(out_of_time()),
                    Some(turn_end) => turn_end - now,
                    None => u64::MAX,
                };
                let left = end.saturating_sub(now);
                if left == 0 {
                    return Err(TransportError {
                        kind: TransportErrorKind::Timeout,
                        message: format!("no answer within {} ms", timeout.as_millis()),
                    });
                }
                let wait_end = now.saturating_add(left.min(tick_ns).min(to_turn_end));
                if let Some(result) = within_until(wait_end, work.as_mut()).await {
                    return result;
                }
                if let Some(link) = &link {
                    // Dropping the pending request abandons it.
                    if link.closed() {
                        return Err(client_gone());
                    }
                    link.beat();
                }
                now = monotonic_clock::now();
            }
        })
    }
}

pub struct LlmModel {
    client: Result<LlmClient<HeartbeatTransport>, LlmError>,
    /// The model the endpoint says answered last (`model` of its response).
    reported: Option<String>,
}

impl LlmModel {
    /// `link`: the stream the turn writes to, if it streams; `turn_end_ms`: the turn's
    /// deadline (monotonic ms), if it has one.
    pub fn new(link: Option<Link>, turn_end_ms: Option<u64>) -> LlmModel {
        LlmModel {
            client: kg_spin::llm_config()
                .map(|config| LlmClient::new(config, HeartbeatTransport { link, turn_end_ms })),
            reported: None,
        }
    }
}

impl Model for LlmModel {
    fn complete(&mut self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let client = self.client.as_ref().map_err(Clone::clone)?;
        let response = client.chat(request)?;
        if let Some(model) = response.model.as_ref().filter(|m| !m.is_empty()) {
            self.reported = Some(model.clone());
        }
        Ok(response)
    }
    /// kg-spin's `LlmStream` (the summariser's), for a direct answer or a ReAct step (its
    /// tools go with the request): the same retries before the first byte, the same
    /// per-call deadline and errors. It needs no heartbeat transport: the turn
    /// pulls it in short waits and looks at its client and deadline between pulls.
    fn start_stream(&mut self, request: &ChatRequest) -> Result<Box<dyn ModelStream>, LlmError> {
        let config = self.client.as_ref().map_err(Clone::clone)?.config().clone();
        let client = LlmClient::new(config, SpinLlmTransport);
        Ok(Box::new(Streamed(LlmStream::start(client, request))))
    }
}

impl AgentModel for LlmModel {
    fn ready(&self) -> Result<(), LlmError> {
        self.client.as_ref().map(|_| ()).map_err(Clone::clone)
    }
    fn used(&self) -> String {
        match (&self.reported, &self.client) {
            (Some(model), _) => model.clone(),
            (None, Ok(client)) => client.config().model.clone(),
            (None, Err(_)) => String::new(),
        }
    }
    fn endpoint(&self) -> Option<(String, String)> {
        let config = self.client.as_ref().ok()?.config();
        Some((config.base_url.clone(), config.model.clone()))
    }
}

/// A direct answer or a ReAct step being streamed (dropping it abandons the call).
struct Streamed(LlmStream);

impl ModelStream for Streamed {
    fn next(&mut self, wait_ms: u32) -> Result<ModelPoll, LlmError> {
        let pulled = self.0.next(Duration::from_millis(u64::from(wait_ms)));
        Ok(match pulled {
            Pulled::Text(text) => ModelPoll::Delta(text),
            Pulled::Pending => ModelPoll::Pending,
            Pulled::Done(result) => ModelPoll::Finished(result?),
        })
    }
}
