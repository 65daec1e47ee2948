//! One answer: the LLM streams it from the prompt; without the LLM, a batch still gets its
//! deterministic report and anything else gets the LLM's error.

use crate::batch_report::batch_report;
use crate::citations::{Citation, cite, known_references};
use crate::language::{Language, detect_language};
use crate::prompt::summary_request_with;
use kg_wit::types::{BatchSummary, Message};
use llm_client::{Chat, ChatRequest, ChatResponse, LlmError, StreamEvent, Usage};

#[derive(Debug, Clone, PartialEq)]
pub struct Evidence {
    /// Tool name or `document:<id>`.
    pub source: String,
    pub summary: String,
    /// JSON text.
    pub data: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SummaryInput {
    pub question: String,
    pub history: Vec<Message>,
    pub evidence: Vec<Evidence>,
    pub batch: Option<BatchSummary>,
    /// BCP 47 tag; `None` = the question's language.
    pub language: Option<String>,
    pub note: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub text: String,
    pub citations: Vec<Citation>,
    pub language: Language,
    pub from_llm: bool,
    pub usage: Option<Usage>,
    /// Why the LLM was not used, when it was not.
    pub warning: Option<String>,
}

/// The answer's language: the one asked for, else the question's.
pub fn answer_language(input: &SummaryInput) -> Language {
    input
        .language
        .as_deref()
        .filter(|t| !t.trim().is_empty())
        .map_or_else(|| detect_language(&input.question), Language::from_tag)
}

/// Produces the answer with the built-in prompt, handing text to `on_delta` as it is
/// generated. `llm` is the error that stands in for the LLM when none is configured.
pub fn summarise(
    input: &SummaryInput,
    llm: Result<&dyn Chat, LlmError>,
    on_delta: &mut dyn FnMut(&str),
) -> Result<Summary, LlmError> {
    let lang = answer_language(input).prompt_lang();
    let prompt = kg_prompts::built_in_prompt(kg_prompts::SUMMARISER, lang);
    summarise_with(&prompt, input, llm, on_delta)
}

/// `summarise` with a given `summariser` prompt (loaded by the caller for
/// `answer_language(input)`).
pub fn summarise_with(
    prompt: &kg_prompts::Prompt,
    input: &SummaryInput,
    llm: Result<&dyn Chat, LlmError>,
    on_delta: &mut dyn FnMut(&str),
) -> Result<Summary, LlmError> {
    let call = prepare(prompt, input);
    let generated = llm.and_then(|llm| {
        llm.chat_stream(&call.request, &mut |event| {
            if let StreamEvent::Content(text) = event {
                on_delta(text);
            }
        })
    });
    conclude(input, &call, generated, on_delta)
}

/// The LLM call an answer needs, for callers that send it themselves (streaming it
/// asynchronously), and what [`conclude`] needs to make the answer of its result.
#[derive(Debug, Clone)]
pub struct SummaryCall {
    pub request: ChatRequest,
    language: Language,
    known: Vec<Citation>,
}

pub fn prepare(prompt: &kg_prompts::Prompt, input: &SummaryInput) -> SummaryCall {
    let language = answer_language(input);
    let report = input.batch.as_ref().map(|b| batch_report(b, language));
    SummaryCall {
        request: summary_request_with(prompt, input, language, report.as_deref()),
        language,
        known: known_references(&input.evidence, input.batch.as_ref()),
    }
}

/// The answer from the call's result (whose text was already handed out as deltas).
/// Without the LLM, a batch still gets its report, handed to `on_delta` whole.
pub fn conclude(
    input: &SummaryInput,
    call: &SummaryCall,
    generated: Result<ChatResponse, LlmError>,
    on_delta: &mut dyn FnMut(&str),
) -> Result<Summary, LlmError> {
    let language = call.language;
    let known = &call.known;
    let failure = match generated {
        Ok(answer) if !answer.content.trim().is_empty() => {
            return Ok(Summary {
                citations: cite(&answer.content, known),
                text: answer.content,
                language,
                from_llm: true,
                usage: answer.usage,
                warning: None,
            });
        }
        Ok(_) => LlmError::BadResponse("the LLM answered with empty text".into()),
        Err(e) => e,
    };
    let Some(batch) = input.batch.as_ref() else {
        return Err(failure);
    };
    // Without the LLM a batch still gets its factual report.
    let mut text = batch_report(batch, language);
    if let Some(note) = input.note.as_deref().filter(|n| !n.trim().is_empty()) {
        text.push_str(&format!("({note})\n"));
    }
    on_delta(&text);
    Ok(Summary {
        citations: cite(&text, known),
        text,
        language,
        from_llm: false,
        usage: None,
        warning: Some(failure.to_string()),
    })
}
