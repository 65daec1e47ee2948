//! The client: one call = up to 1 + `max_retries` attempts within one deadline.

use crate::clock::{Clock, SystemClock};
use crate::config::{LlmConfig, MAX_RETRIES};
use crate::error::{LlmError, is_transient_status};
use crate::request::ChatRequest;
use crate::response::{ChatResponse, parse_chat_response};
use crate::stream::{StreamEvent, StreamParser};
use crate::transport::LlmTransport;
use neo4j_client::{HttpRequest, HttpResponse, Method, TransportErrorKind};
use std::time::Duration;

/// Longest wait a server's `Retry-After` may impose.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(10);

pub struct LlmClient<T, C = SystemClock> {
    config: LlmConfig,
    transport: T,
    clock: C,
}

impl<T: LlmTransport> LlmClient<T, SystemClock> {
    pub fn new(config: LlmConfig, transport: T) -> Self {
        Self::with_clock(config, transport, SystemClock::new())
    }
}

impl<T: LlmTransport, C: Clock> LlmClient<T, C> {
    pub fn with_clock(config: LlmConfig, transport: T, clock: C) -> Self {
        LlmClient {
            config,
            transport,
            clock,
        }
    }

    pub fn config(&self) -> &LlmConfig {
        &self.config
    }

    /// One non-streamed completion.
    pub fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let mut span = self.call_span(request, false);
        let result = self
            .send_with_retries(request, false)
            .and_then(|response| parse_chat_response(&response.body));
        crate::telemetry::finish(&mut span, &result);
        result
    }

    /// The span of one call (GenAI conventions), for callers that send
    /// [`LlmClient::http_request`] themselves: open it before building the request, end it
    /// with [`LlmClient::finish_span`].
    pub fn call_span(&self, request: &ChatRequest, stream: bool) -> kg_telemetry::ActiveSpan {
        crate::telemetry::call_span(request, &self.config.model, &self.config.base_url, stream)
    }

    /// Records `result` on a span from [`LlmClient::call_span`].
    pub fn finish_span(
        span: &mut kg_telemetry::ActiveSpan,
        result: &Result<ChatResponse, LlmError>,
    ) {
        crate::telemetry::finish(span, result);
    }

    /// One streamed completion: `on_event` sees every delta in order, and the assembled
    /// answer is returned. The transport is sync, so the deltas arrive when the body has.
    pub fn chat_stream(
        &self,
        request: &ChatRequest,
        on_event: impl FnMut(&StreamEvent),
    ) -> Result<ChatResponse, LlmError> {
        let mut span = self.call_span(request, true);
        let result = self.chat_stream_unrecorded(request, on_event);
        crate::telemetry::finish(&mut span, &result);
        result
    }

    fn chat_stream_unrecorded(
        &self,
        request: &ChatRequest,
        mut on_event: impl FnMut(&StreamEvent),
    ) -> Result<ChatResponse, LlmError> {
        let response = self.send_with_retries(request, true)?;
        // A server that ignores `stream: true` answers one JSON document.
        if !is_event_stream(&response) {
            let whole = parse_chat_response(&response.body)?;
            if !whole.content.is_empty() {
                on_event(&StreamEvent::Content(whole.content.clone()));
            }
            return Ok(whole);
        }
        let mut parser = StreamParser::new();
        for event in parser.feed(&response.body)? {
            on_event(&event);
        }
        let (answer, rest) = parser.finish()?;
        rest.iter().for_each(&mut on_event);
        Ok(answer)
    }

    /// The HTTP request for `request` (also used by callers that send asynchronously).
    pub fn http_request(&self, request: &ChatRequest, stream: bool) -> HttpRequest {
        let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
        if stream {
            headers.push(("accept".to_string(), "text/event-stream".to_string()));
        }
        if let Some(key) = self.config.api_key.as_deref().filter(|k| !k.is_empty()) {
            headers.push(("authorization".to_string(), format!("Bearer {key}")));
        }
        neo4j_client::propagate_trace_context(&mut headers);
        HttpRequest {
            method: Method::Post,
            url: self.config.completions_url(),
            headers,
            body: Some(request.body_bytes(&self.config.model, stream)),
        }
    }

    fn send_with_retries(
        &self,
        request: &ChatRequest,
        stream: bool,
    ) -> Result<HttpResponse, LlmError> {
        self.config.validate()?;
        // The first attempt sends this one; a retry builds its own (cloning it for every
        // call, in case one fails, copied the whole body each time).
        let mut first = Some(self.http_request(request, stream));
        let started = self.clock.elapsed();
        let deadline = self.config.timeout;
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            let used = self.clock.elapsed().saturating_sub(started);
            let remaining = deadline.saturating_sub(used);
            if remaining.is_zero() {
                return Err(LlmError::Timeout {
                    message: format!("no answer within {} ms", deadline.as_millis()),
                    attempts: attempt - 1,
                });
            }
            let failure = match self.transport.send_within(
                first
                    .take()
                    .unwrap_or_else(|| self.http_request(request, stream)),
                remaining,
            ) {
                Ok(response) if (200..300).contains(&response.status) => return Ok(response),
                Ok(response) if is_transient_status(response.status) => {
                    let wait = retry_after(&response);
                    (
                        LlmError::upstream(response.status, &response.body, attempt),
                        wait,
                    )
                }
                Ok(response) => {
                    return Err(LlmError::upstream(response.status, &response.body, attempt));
                }
                Err(e) => {
                    let message = format!("{}: {e}", self.config.completions_url());
                    match e.kind {
                        TransportErrorKind::Timeout => (
                            LlmError::Timeout {
                                message,
                                attempts: attempt,
                            },
                            None,
                        ),
                        TransportErrorKind::Connect => (
                            LlmError::Unavailable {
                                message,
                                attempts: attempt,
                            },
                            None,
                        ),
                        // Refused by the platform or a malformed request: retrying cannot help.
                        TransportErrorKind::Denied | TransportErrorKind::Other => {
                            return Err(LlmError::Unavailable {
                                message,
                                attempts: attempt,
                            });
                        }
                    }
                }
            };
            let (error, retry_after) = failure;
            let used = self.clock.elapsed().saturating_sub(started);
            let Some(backoff) = self.retry_wait(attempt, used, retry_after) else {
                return Err(error);
            };
            self.clock.sleep(backoff);
        }
    }
}

impl<T: LlmTransport, C: Clock> LlmClient<T, C> {
    /// After attempt `attempt` failed transiently, `used` into the call: how long to wait
    /// before the next one, or `None` when no attempt is left or the wait would end past
    /// the call's deadline (it would only turn the error into a timeout).
    pub(crate) fn retry_wait(
        &self,
        attempt: u32,
        used: Duration,
        retry_after: Option<Duration>,
    ) -> Option<Duration> {
        if attempt > self.config.max_retries.min(MAX_RETRIES) {
            return None;
        }
        // The server's `Retry-After` as given; otherwise exponential backoff with
        // jitter, so clients that failed together do not retry together.
        let backoff = retry_after
            .map(|w| w.min(MAX_RETRY_AFTER))
            .unwrap_or_else(|| {
                let backoff =
                    self.config.backoff_base * 2u32.pow(attempt.saturating_sub(1).min(16));
                if self.config.jitter {
                    jittered(backoff)
                } else {
                    backoff
                }
            });
        (used + backoff < self.config.timeout).then_some(backoff)
    }
}

fn is_event_stream(response: &HttpResponse) -> bool {
    match response.header("content-type") {
        Some(kind) => kind.to_ascii_lowercase().contains("text/event-stream"),
        // Without a content type, look at the body: SSE starts with a field or a comment.
        None => {
            let start = response
                .body
                .iter()
                .position(|b| !b.is_ascii_whitespace())
                .map_or(&[][..], |i| &response.body[i..]);
            start.starts_with(b"data:") || start.starts_with(b":") || start.starts_with(b"event:")
        }
    }
}

/// Somewhere between half of `backoff` and all of it ("equal jitter").
fn jittered(backoff: Duration) -> Duration {
    use std::hash::{BuildHasher, Hasher};
    let random = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    let fraction = 0.5 + (random % 1_000) as f64 / 2_000.0;
    backoff.mul_f64(fraction)
}

/// `Retry-After: <seconds>` (the HTTP-date form is ignored: the backoff applies instead).
pub(crate) fn retry_after(response: &HttpResponse) -> Option<Duration> {
    response
        .header("retry-after")
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(Duration::from_secs_f64)
}

/// A completion source: the client, or a script in tests of code that uses an LLM.
pub trait Chat {
    fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError>;

    /// Streams like [`LlmClient::chat_stream`]; the default hands the whole answer over as
    /// one delta.
    fn chat_stream(
        &self,
        request: &ChatRequest,
        on_event: &mut dyn FnMut(&StreamEvent),
    ) -> Result<ChatResponse, LlmError> {
        let answer = self.chat(request)?;
        if !answer.content.is_empty() {
            on_event(&StreamEvent::Content(answer.content.clone()));
        }
        Ok(answer)
    }
}

impl<T: LlmTransport, C: Clock> Chat for LlmClient<T, C> {
    fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        LlmClient::chat(self, request)
    }

    fn chat_stream(
        &self,
        request: &ChatRequest,
        on_event: &mut dyn FnMut(&StreamEvent),
    ) -> Result<ChatResponse, LlmError> {
        LlmClient::chat_stream(self, request, on_event)
    }
}
