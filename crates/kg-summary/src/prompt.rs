//! The synthesis request: instructions (the `summariser` template, prompts/en/summariser.txt), a window of the conversation, the evidence (each
//! piece and the whole bounded) and, for batches, the factual report.

use crate::language::Language;
use crate::synthesis::SummaryInput;
use kg_wit::types::Role;
use llm_client::{ChatRequest, Message as LlmMessage};

/// Recent turns shown to the LLM.
const HISTORY_TURNS: usize = 6;
const TURN_CHARS: usize = 800;
/// Characters of one piece of evidence's data, and of all evidence together: about 1,000
/// and 4,000 tokens, so the synthesis fits a small model's context and a CPU reads its
/// prompt in seconds (about 100 prompt tokens/s for a 1.5B model on two cores).
const EVIDENCE_CHARS: usize = 4_000;
const EVIDENCE_BUDGET: usize = 14_000;
/// What the answer may take: a few paragraphs.
pub const SUMMARY_MAX_TOKENS: u32 = 700;

/// The request with the built-in `summariser` prompt.
pub fn summary_request(
    input: &SummaryInput,
    language: Language,
    batch_report: Option<&str>,
) -> ChatRequest {
    let prompt = kg_prompts::built_in_prompt(kg_prompts::SUMMARISER, language.prompt_lang());
    summary_request_with(&prompt, input, language, batch_report)
}

/// The request with a given `summariser` prompt (its `language` is the answer's).
pub fn summary_request_with(
    prompt: &kg_prompts::Prompt,
    input: &SummaryInput,
    language: Language,
    batch_report: Option<&str>,
) -> ChatRequest {
    let system = prompt.render(&[("language", language.name())]);
    let mut messages = vec![LlmMessage::system(system)];
    let recent = &input.history[input.history.len().saturating_sub(HISTORY_TURNS)..];
    for turn in recent {
        let text: String = turn.content.chars().take(TURN_CHARS).collect();
        match turn.role {
            Role::User => messages.push(LlmMessage::user(text)),
            Role::Assistant => messages.push(LlmMessage::assistant(text)),
            // Tool turns and old system notes travel as evidence, not as chat turns.
            Role::Tool | Role::System => {}
        }
    }
    let mut user = format!("Question: {}\n", input.question.trim());
    if input.evidence.is_empty() {
        user.push_str("\nEvidence: none was gathered.\n");
    } else {
        user.push_str("\nEvidence:\n");
        let mut budget = EVIDENCE_BUDGET;
        for (n, item) in input.evidence.iter().enumerate() {
            let data: String = item.data.chars().take(EVIDENCE_CHARS.min(budget)).collect();
            budget = budget.saturating_sub(data.chars().count());
            user.push_str(&format!(
                "[{}] source: {}\nsummary: {}\ndata: {}\n",
                n + 1,
                item.source,
                item.summary,
                data
            ));
            if budget == 0 {
                user.push_str("(further evidence omitted for length)\n");
                break;
            }
        }
    }
    if let Some(report) = batch_report {
        user.push_str("\nAction batch report (authoritative):\n");
        user.push_str(report);
    }
    if let Some(note) = input.note.as_deref().filter(|n| !n.trim().is_empty()) {
        user.push_str(&format!("\nNote to convey in the answer: {note}\n"));
    }
    messages.push(LlmMessage::user(user));
    ChatRequest::new(messages)
        .temperature(0.2)
        .max_tokens(SUMMARY_MAX_TOKENS)
}
