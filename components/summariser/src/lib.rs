//! The summariser component: binds `kg:summariser/summariser` to kg-summary, with the LLM
//! reached through Spin outbound HTTP.
//!
//! `start` is a first version of streaming: it generates the whole answer (the sync
//! transport returns the whole SSE body), then `next` hands the deltas out one per pull
//! and finally the answer. kg-summary and llm-client's parser are incremental, so a later
//! version can feed them from an async body stream instead.

use kg_wit::types::{ComponentStatus, Error, TokenUsage};
use llm_client::Chat;
use std::cell::RefCell;
use std::collections::VecDeque;

wit_bindgen::generate!({
    path: "../../wit",
    world: "summariser-component",
    with: { "kg:types/types@0.1.0": kg_wit::types },
});

use exports::kg::summariser::summariser::{
    Answer, AnswerStream, Citation, Guest, GuestAnswerStream, StreamPoll, SummaryRequest,
};

struct Summariser;

/// An answer already generated, handed out delta by delta.
struct GeneratedStream {
    deltas: RefCell<VecDeque<String>>,
    answer: RefCell<Option<Answer>>,
}

impl GuestAnswerStream for GeneratedStream {
    fn next(&self, _wait_ms: u32) -> Result<StreamPoll, Error> {
        if let Some(delta) = self.deltas.borrow_mut().pop_front() {
            return Ok(StreamPoll::Delta(delta));
        }
        Ok(match self.answer.borrow().clone() {
            Some(answer) => StreamPoll::Finished(answer),
            None => StreamPoll::Pending,
        })
    }
}

impl Guest for Summariser {
    type AnswerStream = GeneratedStream;

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
        generate(request, &mut |_| {})
    }

    fn start(request: SummaryRequest) -> Result<AnswerStream, Error> {
        let mut deltas = VecDeque::new();
        let answer = generate(request, &mut |d| deltas.push_back(d.to_string()))?;
        Ok(AnswerStream::new(GeneratedStream {
            deltas: RefCell::new(deltas),
            answer: RefCell::new(Some(answer)),
        }))
    }
}

fn generate(request: SummaryRequest, on_delta: &mut dyn FnMut(&str)) -> Result<Answer, Error> {
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
    // The mounted template (prompts/<lang>/summariser.txt): a broken one refuses the
    // request, naming the file and line.
    let lang = kg_summary::answer_language(&input).prompt_lang();
    let prompt = kg_prompts::load(kg_prompts::SUMMARISER, lang)
        .map_err(|e| Error::new(kg_wit::types::ErrorCode::Internal, e.to_string()))?;
    let client = kg_spin::llm_client();
    let llm = client
        .as_ref()
        .map(|c| c as &dyn Chat)
        .map_err(Clone::clone);
    let summary = kg_summary::summarise_with(&prompt, &input, llm, on_delta)
        .map_err(|e| kg_spin::llm_error(&e))?;
    Ok(Answer {
        text: summary.text,
        citations: summary
            .citations
            .into_iter()
            .map(|c| Citation {
                reference: c.reference,
                label: c.label,
            })
            .collect(),
        language: input
            .language
            .filter(|t| !t.trim().is_empty())
            .unwrap_or_else(|| summary.language.tag().to_string()),
        from_llm: summary.from_llm,
        usage: summary.usage.map(|u| TokenUsage {
            prompt_tokens: u.prompt_tokens,
            completion_tokens: u.completion_tokens,
        }),
    })
}

export!(Summariser);
