//! The summariser component: binds `kg:summariser/summariser` to kg-summary, with the LLM
//! reached through Spin outbound HTTP.
//!
//! `start` sends the LLM call streamed and returns at once; each `next` waits (at most its
//! wait) for the text that arrived since the previous pull (kg-spin's `LlmStream`), and
//! the last one makes the answer of it (kg-summary's `conclude`).

use kg_spin::{LlmStream, Pulled};
use kg_wit::types::{ComponentStatus, Error, TokenUsage};
use llm_client::Chat;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::time::Duration;

wit_bindgen::generate!({
    path: "../../wit",
    world: "summariser-component",
    with: { "kg:types/types@0.1.0": kg_wit::types },
});

use exports::kg::summariser::summariser::{
    Answer, AnswerStream, Citation, Guest, GuestAnswerStream, StreamPoll, SummaryRequest,
};

struct Summariser;

/// An answer being generated: the LLM call in flight, then what is left to hand out.
struct AnswerInFlight {
    state: RefCell<State>,
}

enum State {
    Streaming {
        stream: LlmStream,
        // Boxed: the input (question, history, evidence) is the bulk of the state.
        input: Box<kg_summary::SummaryInput>,
        call: kg_summary::SummaryCall,
    },
    /// Deltas still to hand out, then the answer.
    Ending(VecDeque<String>, Answer),
    Over,
}

impl GuestAnswerStream for AnswerInFlight {
    fn next(&self, wait_ms: u32) -> Result<StreamPoll, Error> {
        let mut state = self.state.borrow_mut();
        if let State::Streaming {
            stream,
            input,
            call,
        } = &mut *state
        {
            let result = match stream.next(Duration::from_millis(u64::from(wait_ms))) {
                Pulled::Text(text) => return Ok(StreamPoll::Delta(text)),
                Pulled::Pending => return Ok(StreamPoll::Pending),
                Pulled::Done(result) => result,
            };
            let mut rest = VecDeque::new();
            let concluded =
                kg_summary::conclude(input, call, result, &mut |d| rest.push_back(d.to_string()));
            let language = input.language.take();
            *state = match concluded {
                Ok(summary) => State::Ending(rest, answer_of(summary, language)),
                Err(e) => {
                    *state = State::Over;
                    return Err(kg_spin::llm_error(&e));
                }
            };
        }
        match std::mem::replace(&mut *state, State::Over) {
            State::Ending(mut rest, answer) => match rest.pop_front() {
                Some(delta) => {
                    *state = State::Ending(rest, answer);
                    Ok(StreamPoll::Delta(delta))
                }
                None => Ok(StreamPoll::Finished(answer)),
            },
            State::Streaming { .. } | State::Over => Err(Error::new(
                kg_wit::types::ErrorCode::Internal,
                "the answer stream is over".to_string(),
            )),
        }
    }
}

impl Guest for Summariser {
    type AnswerStream = AnswerInFlight;

    fn use_trace_context(traceparent: String) {
        kg_spin::telemetry::adopt(&traceparent, "summariser");
    }

    fn take_spans() -> String {
        kg_spin::telemetry::take_spans()
    }

    fn status() -> ComponentStatus {
        kg_spin::status(
            "summariser",
            env!("CARGO_PKG_VERSION"),
            vec![
                kg_spin::configuration_check(kg_spin::LLM_VARIABLES),
                kg_spin::llm_check(),
            ],
        )
    }

    fn summarise(request: SummaryRequest) -> Result<Answer, Error> {
        let (input, prompt) = prepared(request)?;
        let client = kg_spin::llm_client();
        let llm = client
            .as_ref()
            .map(|c| c as &dyn Chat)
            .map_err(Clone::clone);
        let summary = kg_summary::summarise_with(&prompt, &input, llm, &mut |_| {})
            .map_err(|e| kg_spin::llm_error(&e))?;
        Ok(answer_of(summary, input.language))
    }

    fn start(request: SummaryRequest) -> Result<AnswerStream, Error> {
        let (mut input, prompt) = prepared(request)?;
        let call = kg_summary::prepare(&prompt, &input);
        let state = match kg_spin::llm_client() {
            Ok(client) => State::Streaming {
                stream: LlmStream::start(client, &call.request),
                input: Box::new(input),
                call,
            },
            // No LLM: a batch still gets its report, anything else the error.
            Err(e) => {
                let mut rest = VecDeque::new();
                let summary =
                    kg_summary::conclude(&input, &call, Err(e), &mut |d| rest.push_back(d.into()))
                        .map_err(|e| kg_spin::llm_error(&e))?;
                State::Ending(rest, answer_of(summary, input.language.take()))
            }
        };
        Ok(AnswerStream::new(AnswerInFlight {
            state: RefCell::new(state),
        }))
    }
}

/// The request as kg-summary takes it, and the mounted summariser template for its
/// language (prompts/<lang>/summariser.txt): a broken one refuses the request, naming the
/// file and line.
fn prepared(
    request: SummaryRequest,
) -> Result<(kg_summary::SummaryInput, kg_prompts::Prompt), Error> {
    let input = kg_summary::SummaryInput {
        question: request.question,
        history: request.history,
        evidence: request
            .evidence
            .into_iter()
            .map(|e| kg_summary::Evidence {
                source: e.source,
                summary: e.summary,
                data: e.data,
            })
            .collect(),
        batch: request.batch,
        language: request.language,
        note: request.note,
    };
    let lang = kg_summary::answer_language(&input).prompt_lang();
    let prompt = kg_prompts::load(kg_prompts::SUMMARISER, lang)
        .map_err(|e| Error::new(kg_wit::types::ErrorCode::Internal, e.to_string()))?;
    Ok((input, prompt))
}

/// `language`: the tag the request asked for, if any.
fn answer_of(summary: kg_summary::Summary, language: Option<String>) -> Answer {
    Answer {
        text: summary.text,
        citations: summary
            .citations
            .into_iter()
            .map(|c| Citation {
                reference: c.reference,
                label: c.label,
            })
            .collect(),
        language: language
            .filter(|t| !t.trim().is_empty())
            .unwrap_or_else(|| summary.language.tag().to_string()),
        from_llm: summary.from_llm,
        usage: summary.usage.map(|u| TokenUsage {
            prompt_tokens: u.prompt_tokens,
            completion_tokens: u.completion_tokens,
        }),
    }
}

export!(Summariser);
