//! A streamed call driven from outside (sans I/O), for callers whose transport is async
//! and who hand deltas out as they arrive: [`LlmClient::judge_status`] decides what a
//! response's status means (read the body, retry after a wait, or fail), and
//! [`BodyReader`] turns the body's chunks, as they come, into text deltas and finally the
//! assembled answer.

use crate::client::{LlmClient, retry_after};
use crate::clock::Clock;
use crate::error::{LlmError, is_transient_status};
use crate::response::{ChatResponse, parse_chat_response};
use crate::stream::{StreamEvent, StreamParser};
use crate::transport::LlmTransport;
use neo4j_client::{HttpResponse, TransportError, TransportErrorKind};
use std::time::Duration;

/// What the status of one attempt's response means.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// 2xx: read the body.
    Read,
    /// Transient (429/5xx) with attempts and time left: send again after this wait.
    Retry(Duration),
    Fail(LlmError),
}

impl<T: LlmTransport, C: Clock> LlmClient<T, C> {
    /// Judges attempt `attempt` (from 1), `used` into the call, by its response's status
    /// (for a failure, `response.body` is the error body the message quotes).
    pub fn judge_status(&self, response: &HttpResponse, attempt: u32, used: Duration) -> Verdict {
        if (200..300).contains(&response.status) {
            return Verdict::Read;
        }
        let error = LlmError::upstream(response.status, &response.body, attempt);
        if !is_transient_status(response.status) {
            return Verdict::Fail(error);
        }
        match self.retry_wait(attempt, used, retry_after(response)) {
            Some(wait) => Verdict::Retry(wait),
            None => Verdict::Fail(error),
        }
    }

    /// Judges a transport failure of attempt `attempt` the same way: a timeout or an
    /// unreachable endpoint may be retried, a refused or malformed request not.
    pub fn judge_failure(&self, failure: &TransportError, attempt: u32, used: Duration) -> Verdict {
        let message = format!("{}: {failure}", self.config().completions_url());
        let (error, retryable) = match failure.kind {
            TransportErrorKind::Timeout => (
                LlmError::Timeout {
                    message,
                    attempts: attempt,
                },
                true,
            ),
            TransportErrorKind::Connect => (
                LlmError::Unavailable {
                    message,
                    attempts: attempt,
                },
                true,
            ),
            TransportErrorKind::Denied | TransportErrorKind::Other => (
                LlmError::Unavailable {
                    message,
                    attempts: attempt,
                },
                false,
            ),
        };
        match self.retry_wait(attempt, used, None).filter(|_| retryable) {
            Some(wait) => Verdict::Retry(wait),
            None => Verdict::Fail(error),
        }
    }
}

/// The body of a 2xx response to a streamed request, fed as it arrives.
#[derive(Debug)]
pub struct BodyReader {
    form: Form,
}

#[derive(Debug)]
enum Form {
    /// No content type: decided by the first non-blank byte.
    Unknown(Vec<u8>),
    Events(StreamParser),
    /// A server that ignores `stream: true` answers one JSON document.
    Whole(Vec<u8>),
}

impl BodyReader {
    /// `content_type`: the response's `content-type` header, if any.
    pub fn new(content_type: Option<&str>) -> BodyReader {
        let form = match content_type {
            Some(kind) if kind.to_ascii_lowercase().contains("text/event-stream") => {
                Form::Events(StreamParser::new())
            }
            Some(_) => Form::Whole(Vec::new()),
            None => Form::Unknown(Vec::new()),
        };
        BodyReader { form }
    }

    /// Consumes one chunk; returns the text deltas it completed.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<Vec<String>, LlmError> {
        match &mut self.form {
            Form::Events(parser) => Ok(texts(parser.feed(chunk)?)),
            Form::Whole(body) => {
                body.extend_from_slice(chunk);
                Ok(Vec::new())
            }
            Form::Unknown(seen) => {
                seen.extend_from_slice(chunk);
                let Some(start) = seen.iter().position(|b| !b.is_ascii_whitespace()) else {
                    return Ok(Vec::new());
                };
                let rest = &seen[start..];
                // SSE starts with a field or a comment; wait until the prefix is decidable.
                let sse = [&b"data:"[..], b":", b"event:"];
                if sse
                    .iter()
                    .any(|p| p.starts_with(rest) && rest.len() < p.len())
                {
                    return Ok(Vec::new());
                }
                let events = sse.iter().any(|p| rest.starts_with(p));
                let seen = std::mem::take(seen);
                if events {
                    self.form = Form::Events(StreamParser::new());
                } else {
                    self.form = Form::Whole(Vec::new());
                }
                self.feed(&seen)
            }
        }
    }

    /// Ends the body: the deltas it still held and the assembled answer.
    pub fn finish(self) -> Result<(Vec<String>, ChatResponse), LlmError> {
        match self.form {
            Form::Events(parser) => {
                let (answer, rest) = parser.finish()?;
                Ok((texts(rest), answer))
            }
            Form::Whole(body) | Form::Unknown(body) => {
                let answer = parse_chat_response(&body)?;
                let deltas = if answer.content.is_empty() {
                    Vec::new()
                } else {
                    vec![answer.content.clone()]
                };
                Ok((deltas, answer))
            }
        }
    }
}

fn texts(events: Vec<StreamEvent>) -> Vec<String> {
    events
        .into_iter()
        .filter_map(|e| match e {
            StreamEvent::Content(text) => Some(text),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::LlmConfig;
    use neo4j_client::{HttpRequest, Transport};

    struct Unused;
    impl Transport for Unused {
        fn send(&self, _: HttpRequest) -> Result<HttpResponse, TransportError> {
            unreachable!("the caller sends")
        }
    }
    impl LlmTransport for Unused {}

    fn client() -> LlmClient<Unused> {
        let mut config = LlmConfig::new("http://llm/v1", "m");
        config.jitter = false;
        LlmClient::new(config, Unused)
    }

    fn response(status: u16, headers: &[(&str, &str)]) -> HttpResponse {
        HttpResponse {
            status,
            headers: headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            body: b"{\"error\":\"busy\"}".to_vec(),
        }
    }

    #[test]
    fn deltas_come_out_as_the_chunks_arrive_even_cut_mid_line() {
        let mut reader = BodyReader::new(Some("text/event-stream"));
        let first = reader
            .feed(b"data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\nda")
            .unwrap();
        assert_eq!(first, vec!["Hel".to_string()]);
        assert!(
            reader
                .feed(b"ta: {\"choices\":[{\"delta\":{\"con")
                .unwrap()
                .is_empty()
        );
        let second = reader
            .feed(b"tent\":\"lo\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2}}\n\ndata: [DONE]\n\n")
            .unwrap();
        assert_eq!(second, vec!["lo".to_string()]);
        let (rest, answer) = reader.finish().unwrap();
        assert!(rest.is_empty());
        assert_eq!(answer.content, "Hello");
        assert_eq!(answer.usage.map(|u| u.completion_tokens), Some(2));
    }

    #[test]
    fn a_stream_cut_before_its_end_is_an_error() {
        let mut reader = BodyReader::new(None);
        reader
            .feed(b"  data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n")
            .unwrap();
        assert!(matches!(reader.finish(), Err(LlmError::BadResponse(_))));
    }

    #[test]
    fn a_whole_json_answer_is_one_delta_at_the_end() {
        let mut reader = BodyReader::new(Some("application/json"));
        let body = br#"{"choices":[{"message":{"role":"assistant","content":"All of it"},"finish_reason":"stop"}]}"#;
        assert!(reader.feed(&body[..10]).unwrap().is_empty());
        assert!(reader.feed(&body[10..]).unwrap().is_empty());
        let (deltas, answer) = reader.finish().unwrap();
        assert_eq!(deltas, vec!["All of it".to_string()]);
        assert_eq!(answer.content, "All of it");
        let mut sniffed = BodyReader::new(None);
        assert!(sniffed.feed(body).unwrap().is_empty());
        assert_eq!(sniffed.finish().unwrap().1.content, "All of it");
    }

    fn failure(kind: TransportErrorKind) -> TransportError {
        TransportError {
            kind,
            message: "no".into(),
        }
    }

    #[test]
    fn transient_statuses_are_retried_within_the_budget_others_fail() {
        let client = client();
        let zero = Duration::ZERO;
        assert_eq!(
            client.judge_status(&response(200, &[]), 1, zero),
            Verdict::Read
        );
        assert_eq!(
            client.judge_status(&response(429, &[("retry-after", "2")]), 1, zero),
            Verdict::Retry(Duration::from_secs(2))
        );
        assert!(matches!(
            client.judge_status(&response(503, &[]), 1, zero),
            Verdict::Retry(_)
        ));
        assert!(matches!(
            client.judge_status(&response(400, &[]), 1, zero),
            Verdict::Fail(LlmError::Upstream { status: 400, .. })
        ));
        let last = client.config().max_retries + 1;
        assert!(matches!(
            client.judge_status(&response(503, &[]), last, zero),
            Verdict::Fail(LlmError::Upstream { status: 503, attempts, .. }) if attempts == last
        ));
        assert!(matches!(
            client.judge_failure(&failure(TransportErrorKind::Connect), last, zero),
            Verdict::Fail(LlmError::Unavailable { .. })
        ));
        assert!(matches!(
            client.judge_failure(&failure(TransportErrorKind::Connect), 1, zero),
            Verdict::Retry(_)
        ));
        assert!(matches!(
            client.judge_failure(&failure(TransportErrorKind::Denied), 1, zero),
            Verdict::Fail(LlmError::Unavailable { .. })
        ));
        // No retry that would end past the call's deadline.
        let late = client.config().timeout;
        assert!(matches!(
            client.judge_failure(&failure(TransportErrorKind::Timeout), 1, late),
            Verdict::Fail(LlmError::Timeout { .. })
        ));
    }
}
