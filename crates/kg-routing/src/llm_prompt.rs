//! The routing request (its system prompt is the `router` template, prompts/en/router.txt)
//! and the parsing of the LLM's JSON verdict.

use crate::decision::Intent;
use kg_wit::types::{Message, Role};
use llm_client::{ChatRequest, Message as LlmMessage};
use serde_json::Value as Json;

/// Turns of history the router shows the LLM, most recent last.
pub const HISTORY_TURNS: usize = 6;
/// Characters kept of each history turn.
const TURN_CHARS: usize = 600;

/// The Chat Completions request that asks the LLM to route `message`, with the built-in
/// router prompt.
pub fn routing_request(message: &str, history: &[Message]) -> ChatRequest {
    let system = kg_prompts::built_in_prompt(kg_prompts::ROUTER, kg_prompts::Lang::En);
    routing_request_with(&system.render(&[]), message, history)
}

/// `routing_request` with a given system prompt (the `router` template, rendered).
pub fn routing_request_with(system: &str, message: &str, history: &[Message]) -> ChatRequest {
    let mut user = String::new();
    let recent = &history[history.len().saturating_sub(HISTORY_TURNS)..];
    if !recent.is_empty() {
        user.push_str("Conversation so far (oldest first):\n");
        for turn in recent {
            let speaker = match turn.role {
                Role::User => "user",
                Role::Assistant => "assistant",
                Role::System => "system",
                Role::Tool => "tool",
            };
            let text: String = turn.content.chars().take(TURN_CHARS).collect();
            user.push_str(&format!("{speaker}: {}\n", text.replace('\n', " ")));
        }
        user.push('\n');
    }
    user.push_str("Latest message:\n");
    user.push_str(message);
    ChatRequest::new(vec![LlmMessage::system(system), LlmMessage::user(user)])
        .json_mode()
        .temperature(0.0)
        .max_tokens(400)
}

/// The LLM's routing verdict, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct LlmVerdict {
    pub intent: Intent,
    pub confidence: f32,
    pub reason: String,
    pub refined_question: Option<String>,
    pub clarification: Option<String>,
}

/// Parses the verdict. Models wrap JSON in prose or code fences, name intents their own
/// way and write confidence as text: all tolerated; a missing or unknown intent is not.
pub fn parse_verdict(text: &str) -> Result<LlmVerdict, String> {
    let object = first_json_object(text).ok_or("the LLM answer holds no JSON object")?;
    let intent_name = object
        .get("intent")
        .and_then(Json::as_str)
        .ok_or("the LLM answer has no `intent`")?;
    let intent = intent_from_name(intent_name)
        .ok_or_else(|| format!("the LLM named an unknown intent `{intent_name}`"))?;
    let confidence = match object.get("confidence") {
        Some(Json::Number(n)) => n.as_f64(),
        Some(Json::String(s)) => s.trim().trim_end_matches('%').parse::<f64>().ok(),
        _ => None,
    }
    .filter(|c| c.is_finite())
    .map(|c| if c > 1.0 && c <= 100.0 { c / 100.0 } else { c })
    .map_or(0.5, |c| c.clamp(0.0, 1.0)) as f32;
    let text_field = |name: &str| {
        object
            .get(name)
            .and_then(Json::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty() && *s != "null")
            .map(str::to_string)
    };
    Ok(LlmVerdict {
        intent,
        confidence,
        reason: text_field("reason").unwrap_or_else(|| "the LLM gave no reason".into()),
        refined_question: text_field("refined_question"),
        clarification: text_field("clarification"),
    })
}

fn intent_from_name(name: &str) -> Option<Intent> {
    let name = name.trim().to_lowercase().replace(['-', ' '], "_");
    Some(match name.as_str() {
        "query" | "graph_query" | "complex" | "question" | "data_query" => Intent::Query,
        "action" | "command" | "operation" => Intent::Action,
        "document" | "document_qa" | "documents" | "doc" | "retrieval" => Intent::Document,
        "answer" | "direct_answer" | "small_talk" | "smalltalk" | "chitchat" | "greeting" => {
            Intent::Answer
        }
        "clarify" | "clarification" | "ambiguous" => Intent::Clarify,
        _ => return None,
    })
}

/// The first `{…}` in the text that parses as a JSON object.
fn first_json_object(text: &str) -> Option<serde_json::Map<String, Json>> {
    let mut from = 0;
    while let Some(start) = text[from..].find('{').map(|i| i + from) {
        let mut stream = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Json>();
        if let Some(Ok(Json::Object(object))) = stream.next() {
            return Some(object);
        }
        from = start + 1;
    }
    None
}
