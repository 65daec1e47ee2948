//! A whole (non-streamed) chat completion, parsed.

use crate::error::LlmError;
use crate::message::ToolCall;
use crate::wire::{Call, Counts, Whole};
use serde_json::Value as Json;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
}

impl Usage {
    pub(crate) fn from_json(usage: &Json) -> Option<Usage> {
        let field = |name: &str| usage.get(name).and_then(Json::as_u64);
        Usage::from_counts(&Counts {
            prompt: field("prompt_tokens"),
            completion: field("completion_tokens"),
        })
    }

    /// `None` when neither count is there; a count past `u32::MAX` is cut to it.
    pub(crate) fn from_counts(counts: &Counts) -> Option<Usage> {
        let field = |n: Option<u64>| n.map(|n| u32::try_from(n).unwrap_or(u32::MAX));
        let prompt = field(counts.prompt);
        let completion = field(counts.completion);
        (prompt.is_some() || completion.is_some()).then(|| Usage {
            prompt_tokens: prompt.unwrap_or(0),
            completion_tokens: completion.unwrap_or(0),
        })
    }

    /// Sum of two calls' usage, for a conversation's total.
    pub fn plus(self, other: Usage) -> Usage {
        Usage {
            prompt_tokens: self.prompt_tokens.saturating_add(other.prompt_tokens),
            completion_tokens: self
                .completion_tokens
                .saturating_add(other.completion_tokens),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChatResponse {
    /// The assistant's text; empty when it only called tools.
    pub content: String,
    pub tool_calls: Vec<ToolCall>,
    /// `stop`, `tool_calls`, `length`, … as the server reported it.
    pub finish_reason: Option<String>,
    pub usage: Option<Usage>,
    /// The model that answered, when the server says.
    pub model: Option<String>,
}

/// Parses `{"choices": [{"message": {...}, "finish_reason": ...}], "usage": {...}}`.
pub fn parse_chat_response(body: &[u8]) -> Result<ChatResponse, LlmError> {
    let answer = serde_json::from_slice::<Whole>(body)
        .map_err(|e| LlmError::BadResponse(format!("invalid JSON: {e}")))?
        .0;
    if let Some(error) = answer.error {
        return Err(LlmError::BadResponse(format!(
            "the answer is an error: {error}"
        )));
    }
    let choice = answer
        .choice
        .ok_or_else(|| LlmError::BadResponse("no `choices` in the answer".into()))?;
    let message = choice
        .message
        .ok_or_else(|| LlmError::BadResponse("the first choice has no `message`".into()))?;
    let tool_calls = message
        .tool_calls
        .into_iter()
        .enumerate()
        .map(|(position, call)| tool_call(call, position))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ChatResponse {
        content: message.content.unwrap_or_default(),
        tool_calls,
        finish_reason: choice.finish_reason,
        usage: Usage::from_counts(&answer.usage),
        model: answer.model,
    })
}

fn tool_call(call: Call, position: usize) -> Result<ToolCall, LlmError> {
    let function = call
        .function
        .ok_or_else(|| LlmError::BadResponse(format!("tool call {position} has no `function`")))?;
    let name = function
        .name
        .filter(|n| !n.is_empty())
        .ok_or_else(|| LlmError::BadResponse(format!("tool call {position} has no name")))?;
    // OpenAI sends arguments as JSON text; some local servers send an object.
    let arguments = match function.arguments {
        Json::String(text) => text,
        Json::Null => String::new(),
        other => other.to_string(),
    };
    Ok(ToolCall {
        // Some local servers omit ids; the result must still be keyed by one.
        id: call
            .id
            .filter(|id| !id.is_empty())
            .unwrap_or_else(|| format!("call_{position}")),
        name,
        arguments,
    })
}
