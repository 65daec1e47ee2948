//! A streamed LLM call that outlives the component call that started it: the request goes
//! out asynchronously (Chat Completions with `stream: true`), and each [`LlmStream::next`]
//! drives it for at most its wait, handing out the text that arrived. Retries (429/5xx,
//! timeouts, unreachable endpoint) happen only before the body is read, so no text is ever
//! handed out twice. The call's span stays open until the answer or the failure.

use crate::llm::{SpinLlmTransport, within};
use crate::neo4j::{LLM_READ_HEADERS, head_of, outgoing, send_built, transport_error};
use crate::sleep::sleep;
use futures::StreamExt;
use kg_telemetry::ActiveSpan;
use llm_client::{
    BodyReader, ChatRequest, ChatResponse, HttpRequest, HttpResponse, LlmClient, LlmError,
    TransportError, TransportErrorKind, Verdict,
};
use spin_sdk::http::IncomingResponse;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::Poll;
use std::time::Duration;
use wasi::clocks::monotonic_clock;

type Client = LlmClient<SpinLlmTransport>;

/// Once a streamed answer has begun, the longest quiet gap between two of its pieces.
pub const LLM_IDLE_GAP: Duration = Duration::from_secs(30);
type Call = Pin<Box<dyn Future<Output = Result<ChatResponse, LlmError>>>>;

/// What one pull found.
#[derive(Debug)]
pub enum Pulled {
    /// The text that arrived since the previous pull.
    Text(String),
    /// Nothing within the wait.
    Pending,
    /// The call is over (its text was all handed out before).
    Done(Result<ChatResponse, LlmError>),
}

pub struct LlmStream {
    call: Option<Call>,
    arrived: Rc<RefCell<VecDeque<String>>>,
    span: ActiveSpan,
}

impl LlmStream {
    /// Sends `request` streamed; nothing is awaited until the first [`LlmStream::next`].
    pub fn start(client: Client, request: &ChatRequest) -> LlmStream {
        // Opened before the request is built, so its `traceparent` names this call.
        let span = client.call_span(request, true);
        let http = client.http_request(request, true);
        let arrived = Rc::new(RefCell::new(VecDeque::new()));
        let call = Box::pin(stream_call(client, http, arrived.clone()));
        LlmStream {
            call: Some(call),
            arrived,
            span,
        }
    }

    /// Waits at most `wait` for text (or the end); text that arrived is returned at once.
    pub fn next(&mut self, wait: Duration) -> Pulled {
        if let Some(text) = self.take_arrived() {
            return Pulled::Text(text);
        }
        let Some(call) = self.call.as_mut() else {
            return Pulled::Done(Err(LlmError::BadResponse(
                "the answer stream was already finished".into(),
            )));
        };
        let arrived = self.arrived.clone();
        // Drive the call until text arrives, it ends, or the wait is over; a call left
        // pending keeps its place (spin-sdk's executor re-registers it on the next pull).
        let outcome = spin_sdk::http::run(within(
            wait,
            std::future::poll_fn(|cx| match call.as_mut().poll(cx) {
                Poll::Ready(result) => Poll::Ready(Some(result)),
                Poll::Pending if !arrived.borrow().is_empty() => Poll::Ready(None),
                Poll::Pending => Poll::Pending,
            }),
        ));
        if let Some(text) = self.take_arrived() {
            if let Some(Some(result)) = outcome {
                // Ended in the same pull: keep the end for the next one.
                self.call = Some(Box::pin(std::future::ready(result)));
            }
            return Pulled::Text(text);
        }
        match outcome {
            Some(Some(result)) => {
                self.call = None;
                LlmClient::<SpinLlmTransport>::finish_span(&mut self.span, &result);
                Pulled::Done(result)
            }
            _ => Pulled::Pending,
        }
    }

    fn take_arrived(&self) -> Option<String> {
        let mut arrived = self.arrived.borrow_mut();
        if arrived.is_empty() {
            return None;
        }
        Some(arrived.drain(..).collect())
    }
}

fn since(start: u64) -> Duration {
    Duration::from_nanos(monotonic_clock::now().saturating_sub(start))
}

/// The whole call: attempts until a 2xx response (or the verdict to give up), then its
/// body, fed to the parser chunk by chunk, the text pushed onto `arrived`.
async fn stream_call(
    client: Client,
    http: HttpRequest,
    arrived: Rc<RefCell<VecDeque<String>>>,
) -> Result<ChatResponse, LlmError> {
    client.config().validate()?;
    let started = monotonic_clock::now();
    let deadline = client.config().timeout;
    let mut attempt = 0u32;
    loop {
        attempt += 1;
        let left = deadline.saturating_sub(since(started));
        let sent = within(left, send_streamed(http.clone())).await;
        let verdict = match sent {
            None => client.judge_failure(&timeout(deadline), attempt, since(started)),
            Some(Err(e)) => client.judge_failure(&e, attempt, since(started)),
            Some(Ok(response)) => {
                let head = head_of(&response, LLM_READ_HEADERS);
                match client.judge_status(&head, attempt, since(started)) {
                    Verdict::Read => {
                        let read = Reading {
                            started,
                            deadline,
                            attempt,
                        };
                        return read.body(&response, &head, &arrived).await;
                    }
                    Verdict::Retry(wait) => Verdict::Retry(wait),
                    Verdict::Fail(_) => {
                        // The error body is quoted in the message: read (a bounded wait).
                        let left = deadline.saturating_sub(since(started));
                        let body = within(left, response.into_body())
                            .await
                            .and_then(Result::ok)
                            .unwrap_or_default();
                        let head = HttpResponse { body, ..head };
                        client.judge_status(&head, attempt, since(started))
                    }
                }
            }
        };
        match verdict {
            Verdict::Retry(wait) => sleep(wait).await,
            Verdict::Fail(e) => return Err(e),
            // Only a 2xx is `Read`, and it returned above.
            Verdict::Read => {
                return Err(LlmError::BadResponse("a failed response was read".into()));
            }
        }
    }
}

fn timeout(deadline: Duration) -> TransportError {
    TransportError {
        kind: TransportErrorKind::Timeout,
        message: format!("no answer within {} ms", deadline.as_millis()),
    }
}

async fn send_streamed(http: HttpRequest) -> Result<IncomingResponse, TransportError> {
    let (request, body) = outgoing(http).map_err(transport_error)?;
    send_built::<IncomingResponse>(request, body)
        .await
        .map_err(transport_error)
}

/// Where the call stands when its body is read.
struct Reading {
    started: u64,
    deadline: Duration,
    attempt: u32,
}

impl Reading {
    async fn body(
        &self,
        response: &IncomingResponse,
        head: &HttpResponse,
        arrived: &RefCell<VecDeque<String>>,
    ) -> Result<ChatResponse, LlmError> {
        let mut reader = BodyReader::new(head.header("content-type"));
        let mut body = Box::pin(response.take_body_stream());
        let mut writing = false;
        loop {
            // Until the first text, the call's deadline (a CPU model reads a long prompt
            // for tens of seconds before it writes); then a quiet gap: a model still
            // writing is not a dead one, and the turn's deadline and `max_tokens` bound
            // the whole.
            let left = if writing {
                LLM_IDLE_GAP
            } else {
                self.deadline.saturating_sub(since(self.started))
            };
            let chunk = match within(left, body.next()).await {
                None if writing => {
                    return Err(LlmError::Timeout {
                        message: format!(
                            "the answer stopped: nothing for {} ms",
                            LLM_IDLE_GAP.as_millis()
                        ),
                        attempts: self.attempt,
                    });
                }
                None => {
                    return Err(LlmError::Timeout {
                        message: format!(
                            "the answer did not start within {} ms",
                            self.deadline.as_millis()
                        ),
                        attempts: self.attempt,
                    });
                }
                Some(None) => break,
                Some(Some(Ok(chunk))) => chunk,
                // The host's error is not quoted: its debug form names internal types.
                Some(Some(Err(_))) => {
                    return Err(LlmError::Unavailable {
                        message: "the answer stream broke off before its end".to_string(),
                        attempts: self.attempt,
                    });
                }
            };
            let texts = reader.feed(&chunk)?;
            // The first text, not the first byte: llama-server sends the role's chunk at
            // once and then nothing while it reads the prompt.
            writing |= texts.iter().any(|t| !t.is_empty());
            arrived
                .borrow_mut()
                .extend(texts.into_iter().filter(|t| !t.is_empty()));
        }
        let (rest, answer) = reader.finish()?;
        arrived
            .borrow_mut()
            .extend(rest.into_iter().filter(|t| !t.is_empty()));
        Ok(answer)
    }
}
