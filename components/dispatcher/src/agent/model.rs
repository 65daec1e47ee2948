//! The LLM as the agent calls it. While a call is out, a stream gets a heartbeat comment
//! every 10 s: the request is sent asynchronously and raced against a timer, and each time
//! the timer wins the heartbeat goes out and the wait goes on (within the call's deadline).

use kg_agent_core::react::Model;
use kg_spin::{send_async, within};
use llm_client::{
    ChatRequest, ChatResponse, HttpRequest, HttpResponse, LlmClient, LlmError, LlmTransport,
    Transport, TransportError, TransportErrorKind,
};
use std::pin::pin;
use std::rc::Rc;
use std::time::Duration;
use wasi::clocks::monotonic_clock;

/// How often an idle stream hears from us (DESIGN.md §3).
pub const HEARTBEAT: Duration = Duration::from_secs(10);

/// Called when a heartbeat is due.
pub type Beat = Rc<dyn Fn()>;

pub struct HeartbeatTransport {
    beat: Option<Beat>,
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
        let beat = self.beat.clone();
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
                if let Some(result) = within(left.min(HEARTBEAT), work.as_mut()).await {
                    return result;
                }
                if let Some(beat) = &beat {
                    beat();
                }
            }
        })
    }
}

pub struct LlmModel {
    client: LlmClient<HeartbeatTransport>,
    /// The model the endpoint says answered last (`model` of its response).
    pub reported: Option<String>,
}

impl LlmModel {
    pub fn new(beat: Option<Beat>) -> Result<LlmModel, LlmError> {
        Ok(LlmModel {
            client: LlmClient::new(kg_spin::llm_config()?, HeartbeatTransport { beat }),
            reported: None,
        })
    }

    /// The model that answered: as the endpoint reported it, else as configured.
    pub fn used(&self) -> String {
        self.reported
            .clone()
            .unwrap_or_else(|| self.client.config().model.clone())
    }
}

impl Model for LlmModel {
    fn complete(&mut self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let response = self.client.chat(request)?;
        if let Some(model) = response.model.as_ref().filter(|m| !m.is_empty()) {
            self.reported = Some(model.clone());
        }
        Ok(response)
    }
}
