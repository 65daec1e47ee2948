//! Chat messages, including assistant tool calls and the tool results that answer them.

use serde_json::{Map, Value as Json};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

/// One function call the model asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// The arguments exactly as the model wrote them (JSON text, not checked here).
    pub arguments: String,
}

impl ToolCall {
    /// The arguments parsed; models sometimes write invalid JSON, so this can fail.
    pub fn arguments_json(&self) -> Result<Json, String> {
        if self.arguments.trim().is_empty() {
            return Ok(Json::Object(Map::new()));
        }
        serde_json::from_str(&self.arguments)
            .map_err(|e| format!("tool call `{}` has invalid JSON arguments: {e}", self.name))
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub role: Role,
    pub content: Option<String>,
    /// Assistant turns: the calls the model made.
    pub tool_calls: Vec<ToolCall>,
    /// Tool turns: the call this result answers.
    pub tool_call_id: Option<String>,
}

impl Message {
    fn text(role: Role, content: impl Into<String>) -> Self {
        Message {
            role,
            content: Some(content.into()),
            tool_calls: vec![],
            tool_call_id: None,
        }
    }

    pub fn system(content: impl Into<String>) -> Self {
        Self::text(Role::System, content)
    }

    pub fn user(content: impl Into<String>) -> Self {
        Self::text(Role::User, content)
    }

    pub fn assistant(content: impl Into<String>) -> Self {
        Self::text(Role::Assistant, content)
    }

    /// The assistant turn that requested `calls`, to send back before their results.
    pub fn assistant_tool_calls(content: Option<String>, calls: Vec<ToolCall>) -> Self {
        Message {
            role: Role::Assistant,
            content,
            tool_calls: calls,
            tool_call_id: None,
        }
    }

    /// The result of the call with id `tool_call_id`.
    pub fn tool_result(tool_call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Message {
            role: Role::Tool,
            content: Some(content.into()),
            tool_calls: vec![],
            tool_call_id: Some(tool_call_id.into()),
        }
    }
}
