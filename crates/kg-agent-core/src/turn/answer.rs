//! The turn's final answer: the summariser writes it from the evidence (or from a batch's
//! report), streamed as `content` events when the client reads a stream.

use super::ports::Ports;
use super::{TurnResult, check_listening, stopped};
use crate::events::Event;
use crate::react::Gathered;
use kg_http::ApiError;
use kg_wit::kg::summariser::summariser::{self, Answer, Evidence, StreamPoll, SummaryRequest};
use kg_wit::types::{BatchSummary, Message as WitMessage};
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
