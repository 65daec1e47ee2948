//! The LLM as the agent calls it. While a call is out on a stream, the call is raced
//! against a short timer: each time the timer wins, the stream is asked whether the client
//! is still there (if not, the call is dropped at once and nothing more is sent) and,
//! after 10 quiet seconds, gets a heartbeat comment; then the wait goes on (within the
//! call's deadline).

use super::sink::{HEARTBEAT, Link};
use kg_agent_core::react::Model;
use kg_agent_core::turn::ports::AgentModel;
use kg_spin::{send_async, within};
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
}

/// Not retried by the client (kind `Other`): the turn is over.
fn client_gone() -> TransportError {
    TransportError {
        kind: TransportErrorKind::Other,
        message: "the client disconnected".into(),
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
        let end = monotonic_clock::now()
            .saturating_add(u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX));
        spin_sdk::http::run(async move {
            let mut work = pin!(send_async(request));
            loop {
                let left = Duration::from_nanos(end.saturating_sub(monotonic_clock::now()));
                if left.is_zero() {
                    return Err(TransportError {
                        kind: TransportErrorKind::Timeout,
                        message: format!("no answer within {} ms", timeout.as_millis()),
                    });
                }
                if let Some(result) = within(left.min(tick), work.as_mut()).await {
                    return result;
                }
                if let Some(link) = &link {
                    // Dropping the pending request abandons it.
                    if link.closed() {
                        return Err(client_gone());
                    }
                    link.beat();
                }
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
    /// `link`: the stream the turn writes to, if it streams.
    pub fn new(link: Option<Link>) -> LlmModel {
        LlmModel {
            client: kg_spin::llm_config()
                .map(|config| LlmClient::new(config, HeartbeatTransport { link })),
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
