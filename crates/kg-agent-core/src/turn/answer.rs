//! The turn's final answer: the summariser writes it from the evidence (or from a batch's
//! report), or the LLM answers directly (small talk, or a ReAct step that needed no tool);
//! streamed as `content` events when the client reads a stream.

use super::ports::Ports;
use super::reply_stream::{Pulled, pull_reply};
use super::{TurnResult, check_listening, llm_api_error, stopped};
use crate::events::Event;
use crate::react::Gathered;
use kg_http::ApiError;
use kg_wit::kg::summariser::summariser::{self, Answer, Evidence, StreamPoll, SummaryRequest};
use kg_wit::types::{BatchSummary, Message as WitMessage};
use llm_client::{ChatRequest, ChatResponse};
use serde_json::json;

/// How long one pull of the answer stream waits for text. Short, because between pulls
/// the turn looks whether the client left or the deadline passed (a pending summariser
/// call is cut within this); heartbeats go by time, not by pull, and a delta comes back
/// as soon as it arrives, so this costs a few cheap calls per second while the LLM thinks.
const STREAM_WAIT_MS: u32 = 250;

pub fn evidence_of(gathered: &[Gathered]) -> Vec<Evidence> {
    gathered
        .iter()
        .filter(|g| g.observation.ok)
        .map(|g| Evidence {
            source: g.call.name.clone(),
            summary: g.observation.summary.clone(),
            data: g.observation.content.clone(),
        })
        .collect()
}

fn record_answer(p: &Ports, result: &mut TurnResult, answer: Answer) {
    // The summariser calls the same configured LLM.
    if answer.from_llm && result.model_used.is_none() {
        result.model_used = p.model.endpoint().map(|(_, model)| model);
    }
    if let Some(u) = answer.usage {
        result.prompt_tokens += u.prompt_tokens;
        result.completion_tokens += u.completion_tokens;
    }
    result.sources = answer
        .citations
        .iter()
        .map(|c| json!({"reference": c.reference, "label": c.label}))
        .collect();
    result.answer = answer.text;
}

/// Why a streamed answer did not finish.
enum Cut {
    /// The client left or the turn's deadline passed.
    Stopped,
    Failed(kg_wit::types::Error),
}

/// Pulls the summariser's answer stream, sending each delta as a `content` event
/// (`content_start` first). `None` when the stream could not start (fall back to a whole
/// answer).
fn stream_answer(request: &SummaryRequest, p: &mut Ports) -> Option<Result<Answer, Cut>> {
    let mut stream = p.summariser.start(request).ok()?;
    p.sink.emit(Event::ContentStart);
    loop {
        if p.sink.gone() {
            return Some(Err(Cut::Stopped));
        }
        match stream.next(STREAM_WAIT_MS) {
            Ok(StreamPoll::Delta(text)) => p.sink.emit(Event::Content(text)),
            Ok(StreamPoll::Pending) => p.sink.heartbeat(),
            Ok(StreamPoll::Finished(answer)) => return Some(Ok(answer)),
            Err(e) => return Some(Err(Cut::Failed(e))),
        }
    }
}

/// The LLM answers `request` itself (no tools, no summariser): streamed as `content`
/// events when the client reads a stream, else (or when the stream cannot start) one
/// whole completion. Records the answer, its usage and the model that wrote it.
pub fn answer_directly(
    request: &ChatRequest,
    p: &mut Ports,
    result: &mut TurnResult,
) -> Result<(), ApiError> {
    check_listening(p)?;
    let streamed = if p.sink.streaming() {
        stream_reply(request, p)
    } else {
        None
    };
    let response = match streamed {
        Some(outcome) => outcome?,
        None => {
            let response = match p.model.complete(request) {
                Ok(response) => response,
                Err(_) if p.sink.gone() => return Err(stopped(p)),
                Err(e) => return Err(llm_api_error(&e, p.model.endpoint())),
            };
            p.sink.emit(Event::ContentStart);
            p.sink.emit(Event::Content(response.content.clone()));
            response
        }
    };
    if let Some(u) = response.usage {
        result.prompt_tokens += u.prompt_tokens;
        result.completion_tokens += u.completion_tokens;
    }
    result.model_used = Some(
        response
            .model
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| p.model.used()),
    );
    result.answer = response.content;
    Ok(())
}

/// The LLM's own answer stream, pulled to its end (see [`pull_reply`]); a reply that
/// arrived without deltas goes out whole. `None` when the stream could not start.
fn stream_reply(request: &ChatRequest, p: &mut Ports) -> Option<Result<ChatResponse, ApiError>> {
    let mut stream = p.model.start_stream(request).ok()?;
    Some(match pull_reply(&mut *stream, &mut *p.sink) {
        Pulled::Finished { response, shown } => {
            if !shown {
                p.sink.emit(Event::ContentStart);
                p.sink.emit(Event::Content(response.content.clone()));
            }
            Ok(response)
        }
        Pulled::Stopped => Err(stopped(p)),
        Pulled::Failed(e) => Err(llm_api_error(&e, p.model.endpoint())),
    })
}

/// The ReAct loop's own answer: already out when its step was streamed (`shown`), else
/// given whole.
pub fn give_draft(draft: &str, shown: bool, p: &mut Ports, result: &mut TurnResult) {
    result.answer = draft.to_string();
    if !shown {
        p.sink.emit(Event::ContentStart);
        p.sink.emit(Event::Content(result.answer.clone()));
    }
}

/// What the answer is written from.
pub struct Synthesis<'a> {
    pub question: &'a str,
    pub history: &'a [WitMessage],
    pub evidence: Vec<Evidence>,
    pub batch: Option<BatchSummary>,
    pub note: Option<String>,
    /// The loop's own answer: the answer when the summariser fails.
    pub draft: Option<&'a str>,
}

/// The final answer from the summariser, streamed as `content` events. When the
/// summariser fails, the loop's own draft (if any) is the answer.
pub fn synthesise(s: Synthesis, p: &mut Ports, result: &mut TurnResult) -> Result<(), ApiError> {
    p.sink.emit(Event::Thinking {
        node: "summariser".into(),
        display_name: "Writing the answer".into(),
        details: format!("{} pieces of evidence", s.evidence.len()),
        sub_status: if s.batch.is_some() {
            "reporting the batch".into()
        } else {
            "synthesising from the evidence".into()
        },
    });
    check_listening(p)?;
    let request = summariser::SummaryRequest {
        question: s.question.into(),
        history: s.history.to_vec(),
        evidence: s.evidence,
        batch: s.batch,
        language: None,
        note: s.note,
    };
    if p.sink.streaming()
        && let Some(outcome) = stream_answer(&request, p)
    {
        return match outcome {
            Ok(answer) => {
                record_answer(p, result, answer);
                Ok(())
            }
            Err(Cut::Stopped) => Err(stopped(p)),
            Err(Cut::Failed(e)) => match s.draft {
                Some(text) => {
                    result.answer = text.to_string();
                    p.sink.emit(Event::Content(result.answer.clone()));
                    Ok(())
                }
                None => Err(ApiError::from(e)),
            },
        };
    }
    match p.summariser.summarise(&request) {
        Ok(answer) => record_answer(p, result, answer),
        Err(_) if p.sink.gone() => return Err(stopped(p)),
        Err(e) => match s.draft {
            Some(text) => result.answer = text.to_string(),
            None => return Err(ApiError::from(e)),
        },
    }
    p.sink.emit(Event::ContentStart);
    p.sink.emit(Event::Content(result.answer.clone()));
    Ok(())
}
