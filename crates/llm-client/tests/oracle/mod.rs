//! The answer parser as it was before it read typed structs: the whole body parsed into a
//! `serde_json::Value` tree, then walked. Kept as the oracle the typed parser must agree
//! with (tests/response_equivalence.rs) and as the "before" of benches/hot_path.rs.

use llm_client::{ChatResponse, LlmError, ToolCall, Usage};
use serde_json::Value as Json;

fn usage_from_json(usage: &Json) -> Option<Usage> {
    let field = |name: &str| {
        usage
            .get(name)
            .and_then(Json::as_u64)
            .map(|n| u32::try_from(n).unwrap_or(u32::MAX))
    };
    let prompt = field("prompt_tokens");
    let completion = field("completion_tokens");
    (prompt.is_some() || completion.is_some()).then(|| Usage {
        prompt_tokens: prompt.unwrap_or(0),
        completion_tokens: completion.unwrap_or(0),
    })
}

/// Parses `{"choices": [{"message": {...}, "finish_reason": ...}], "usage": {...}}`.
pub fn parse_chat_response(body: &[u8]) -> Result<ChatResponse, LlmError> {
    let json: Json = serde_json::from_slice(body)
        .map_err(|e| LlmError::BadResponse(format!("invalid JSON: {e}")))?;
    if let Some(error) = json.get("error").filter(|e| !e.is_null()) {
        return Err(LlmError::BadResponse(format!(
            "the answer is an error: {error}"
        )));
    }
    let choice = json
        .get("choices")
        .and_then(Json::as_array)
        .and_then(|c| c.first())
        .ok_or_else(|| LlmError::BadResponse("no `choices` in the answer".into()))?;
    let message = choice
        .get("message")
        .ok_or_else(|| LlmError::BadResponse("the first choice has no `message`".into()))?;
    let content = message
        .get("content")
        .and_then(Json::as_str)
        .unwrap_or_default()
        .to_string();
    let mut tool_calls = Vec::new();
    if let Some(calls) = message.get("tool_calls").and_then(Json::as_array) {
        for (position, call) in calls.iter().enumerate() {
            tool_calls.push(parse_tool_call(call, position)?);
        }
    }
    Ok(ChatResponse {
        content,
        tool_calls,
        finish_reason: choice
            .get("finish_reason")
            .and_then(Json::as_str)
            .map(str::to_string),
        usage: json.get("usage").and_then(usage_from_json),
        model: json.get("model").and_then(Json::as_str).map(str::to_string),
    })
}

fn parse_tool_call(call: &Json, position: usize) -> Result<ToolCall, LlmError> {
    let function = call
        .get("function")
        .ok_or_else(|| LlmError::BadResponse(format!("tool call {position} has no `function`")))?;
    let name = function
        .get("name")
        .and_then(Json::as_str)
        .filter(|n| !n.is_empty())
        .ok_or_else(|| LlmError::BadResponse(format!("tool call {position} has no name")))?;
    // OpenAI sends arguments as JSON text; some local servers send an object.
    let arguments = match function.get("arguments") {
        Some(Json::String(text)) => text.clone(),
        Some(Json::Null) | None => String::new(),
        Some(other) => other.to_string(),
    };
    Ok(ToolCall {
        // Some local servers omit ids; the result must still be keyed by one.
        id: call
            .get("id")
            .and_then(Json::as_str)
            .filter(|id| !id.is_empty())
            .map_or_else(|| format!("call_{position}"), str::to_string),
        name: name.to_string(),
        arguments,
    })
}
