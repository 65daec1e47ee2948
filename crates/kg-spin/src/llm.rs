//! llm-client over Spin outbound HTTP, configured from the `llm_*` variables, with each
//! attempt raced against a timer on the WASI monotonic clock (spin-sdk's `send` takes no
//! timeout), and LLM errors mapped onto the WIT error classes.

use crate::neo4j::{LLM_READ_HEADERS, send_reading};
use crate::variable;
use kg_wit::types::{Check, Error, ErrorCode};
use llm_client::{
    HttpRequest, HttpResponse, LlmClient, LlmConfig, LlmError, LlmTransport, Transport,
    TransportError, TransportErrorKind,
};
use std::future::Future;
use std::pin::pin;
use std::task::Poll;
use std::time::Duration;

/// Deadline of one LLM call, retries included: of the whole answer when it comes whole, of
/// its first piece when it is streamed (then [`crate::llm_stream::LLM_IDLE_GAP`] between
/// pieces). A CPU model reads a long prompt for tens of seconds before it writes.
pub const LLM_CALL_TIMEOUT: Duration = Duration::from_secs(180);

pub struct SpinLlmTransport;

impl Transport for SpinLlmTransport {
    fn send(&self, request: HttpRequest) -> Result<HttpResponse, TransportError> {
        spin_sdk::http::run(send_reading(request, LLM_READ_HEADERS))
    }
}

impl LlmTransport for SpinLlmTransport {
    fn send_within(
        &self,
        request: HttpRequest,
        timeout: Duration,
    ) -> Result<HttpResponse, TransportError> {
        let millis = timeout.as_millis();
        spin_sdk::http::run(within(timeout, send_reading(request, LLM_READ_HEADERS)))
            .unwrap_or_else(|| {
                Err(TransportError {
                    kind: TransportErrorKind::Timeout,
                    message: format!("no answer within {millis} ms"),
                })
            })
    }
}

/// The LLM configured by `llm_origin` + `llm_base_path`, `llm_model` and `llm_api_key`.
pub fn llm_client() -> Result<LlmClient<SpinLlmTransport>, LlmError> {
    Ok(LlmClient::new(llm_config()?, SpinLlmTransport))
}

pub fn llm_config() -> Result<LlmConfig, LlmError> {
    let read = |name: &str| variable(name).map_err(LlmError::NotConfigured);
    let base_url = llm_base_url().map_err(LlmError::NotConfigured)?;
    let mut config = LlmConfig::new(base_url, read("llm_model")?.trim());
    config.api_key = Some(read("llm_api_key")?).filter(|k| !k.is_empty());
    config.timeout = LLM_CALL_TIMEOUT;
    config.validate()?;
    Ok(config)
}

/// `llm_origin` + `llm_base_path` (chat completions, models and embeddings all hang off
/// it), each checked on its own so that an error names the variable to fix; no trailing `/`.
pub fn llm_base_url() -> Result<String, String> {
    let origin =
        kg_url::http_origin("llm_origin", &variable("llm_origin")?).map_err(|e| e.to_string())?;
    let path = variable("llm_base_path")?;
    let path = path.trim();
    if !(path.is_empty() || path.starts_with('/')) {
        return Err(format!(
            "variable `llm_base_path`: `{path}` does not start with `/`; expected the API's path on llm_origin, e.g. /v1"
        ));
    }
    let joined = format!("{}{path}", origin.as_str().trim_end_matches('/'));
    let base = kg_url::http_base("llm_base_path", &joined).map_err(|e| e.to_string())?;
    Ok(base.as_str().trim_end_matches('/').to_string())
}

/// The configuration as `/health` shows it: endpoint and model, never the key. Named
/// `llm_configuration` and saying so: this check contacts nothing (reachability is the
/// dispatcher's `GET /health/ready` check), so it must not read as "the LLM is up".
pub fn llm_check() -> Check {
    match llm_config() {
        Ok(config) => Check {
            name: "llm_configuration".into(),
            ok: true,
            detail: format!(
                "configured (not contacted by this check): {} model `{}`{}",
                config.completions_url(),
                config.model,
                if config.api_key.is_some() {
                    ", API key set"
                } else {
                    ""
                }
            ),
        },
        Err(e) => Check {
            name: "llm_configuration".into(),
            ok: false,
            detail: e.to_string(),
        },
    }
}

/// The WIT error for an LLM failure; `detail.reason` names the class for the dispatcher
/// (`llm_not_configured`, `llm_unavailable`, …).
pub fn llm_error(e: &LlmError) -> Error {
    let (code, reason) = match e {
        LlmError::NotConfigured(_) => (ErrorCode::Unavailable, "llm_not_configured"),
        LlmError::Unavailable { .. } => (ErrorCode::Unavailable, "llm_unavailable"),
        LlmError::Timeout { .. } => (ErrorCode::Timeout, "llm_timeout"),
        LlmError::Upstream { .. } => (ErrorCode::Upstream, "llm_upstream"),
        LlmError::BadResponse(_) => (ErrorCode::Upstream, "llm_bad_response"),
    };
    Error {
        code,
        message: e.to_string(),
        retryable: e.retryable(),
        detail: Some(format!(r#"{{"reason":"{reason}"}}"#)),
    }
}

/// `Some(output)` when `work` finishes within `timeout`, `None` otherwise.
pub async fn within<T>(timeout: Duration, work: impl Future<Output = T>) -> Option<T> {
    race(crate::sleep::sleep(timeout), work).await
}

/// `Some(output)` when `work` finishes before the monotonic clock reads `deadline_ns`,
/// `None` otherwise: [`within`] for a caller that has just read the clock.
pub async fn within_until<T>(deadline_ns: u64, work: impl Future<Output = T>) -> Option<T> {
    race(crate::sleep::Sleep::until(deadline_ns), work).await
}

/// `work`'s output, or `None` once `timer` completes first (`work` is polled first).
async fn race<T>(timer: crate::sleep::Sleep, work: impl Future<Output = T>) -> Option<T> {
    let mut work = pin!(work);
    let mut timer = pin!(timer);
    std::future::poll_fn(|cx| {
        if let Poll::Ready(output) = work.as_mut().poll(cx) {
            return Poll::Ready(Some(output));
        }
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    })
    .await
}
